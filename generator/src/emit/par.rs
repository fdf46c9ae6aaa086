//! Emitting files in parallel, with the same output as one after the other.
//!
//! Formatting (`syn` parse of the token stream, then `prettyplease`) is most of a generation's time, and
//! files are independent. `proc_macro2` token streams cannot cross threads, so each job builds its own
//! tokens and returns the file's text; results come back in input order, so the output does not depend on
//! scheduling.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` over `items`, on up to [`std::thread::available_parallelism`] threads (none spawned for one item or
/// one core), results in the order of `items`. Jobs start in decreasing `cost` so the longest ones do not
/// come last.
pub fn map<T, R, C, F>(items: &[T], cost: C, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    C: Fn(&T) -> usize,
    F: Fn(&T) -> R + Sync,
{
    let threads = std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1)
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(cost(&items[i])));
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let r = f(&items[i]);
                    if let Ok(mut slot) = results[i].lock() {
                        *slot = Some(r);
                    }
                }
            });
        }
    });
    // Every index was taken by exactly one thread; a job that panicked has already propagated its panic
    // out of `scope`.
    results
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_the_input_order() {
        let items: Vec<usize> = (0..50).collect();
        let out = super::map(&items, |i| *i % 7, |i| i * 2);
        assert_eq!(out, items.iter().map(|i| i * 2).collect::<Vec<_>>());
        assert!(super::map(&[] as &[usize], |_| 0, |i| *i).is_empty());
    }
}
