//! The pipeline's thread: [`on_big_stack`] runs a closure on a thread with a [`PIPELINE_STACK`] stack. Shaping,
//! emitting and building CRD schemas recurse once per level of nesting of the spec's definitions, so
//! [`Builder::generate`](crate::Builder::generate) and [`crds`](crate::emit::crd::crds) run there. A leaf: it uses
//! nothing of the crate.

/// The stack reserved for the pipeline's thread (see [`Builder::generate`](crate::Builder::generate)): 512 MiB.
pub const PIPELINE_STACK: usize = 512 << 20;

/// Runs `f` on a thread with a [`PIPELINE_STACK`] stack, or on this thread when none can be started; a panic
/// in `f` is resumed here.
pub(crate) fn on_big_stack<T: Send>(f: impl Fn() -> T + Sync) -> T {
    let ran = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("armgen".into())
            .stack_size(PIPELINE_STACK)
            .spawn_scoped(scope, &f)
            .ok()
            .map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    });
    match ran {
        Some(out) => out,
        None => f(),
    }
}
