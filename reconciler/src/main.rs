fn main() {
    println!("aks-reconciler {}", env!("CARGO_PKG_VERSION"));
}
