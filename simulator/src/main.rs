fn main() {
    println!("arm-simulator {}", env!("CARGO_PKG_VERSION"));
}
