//! A bounded single-producer single-consumer ring (Lamport's queue with cached indices).
//!
//! The producer owns `tail`, the consumer owns `head`; each index sits on its own cache line
//! (128-byte aligned, covering adjacent-line prefetch) so the two threads do not false-share.
//! The producer publishes a slot with a Release store of `tail`; the consumer sees it with an
//! Acquire load, and frees it with a Release store of `head` that the producer Acquire-loads.
//! Each side caches the other's index and reloads it only when the ring looks full or empty.
//!
//! Under `--cfg loom` the atomics, the slot cells, `Arc` and the back-off come from `loom`, so
//! the `loom_*` tests below model-check the ring (every interleaving and every outcome the
//! memory orderings allow, for two threads): see docs/runtime.md for the command.
use std::cell::Cell;
use std::mem::MaybeUninit;
use sync::{Arc, AtomicBool, AtomicUsize, Ordering, SlotCell};

/// The synchronization the ring (and the executor's in-flight count, `crate::staged`) uses:
/// std's, or loom's when model checking.
pub(crate) mod sync {
    #[cfg(loom)]
    pub use loom::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
    #[cfg(loom)]
    pub use loom::sync::Arc;
    #[cfg(not(loom))]
    pub use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
    #[cfg(not(loom))]
    pub use std::sync::Arc;

    /// A slot: an `UnsafeCell` (loom's checks each access against the others' for a race).
    #[cfg(not(loom))]
    pub struct SlotCell<T>(std::cell::UnsafeCell<T>);
    #[cfg(not(loom))]
    impl<T> SlotCell<T> {
        pub fn new(v: T) -> Self {
            SlotCell(std::cell::UnsafeCell::new(v))
        }
        #[inline(always)]
        pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
    #[cfg(loom)]
    pub use loom::cell::UnsafeCell as SlotCell;

    #[cfg(loom)]
    pub use loom::thread::yield_now;
    #[cfg(not(loom))]
    pub use std::thread::yield_now;
}

#[repr(align(128))]
struct Padded<T>(T);

struct Shared<T> {
    slots: Box<[SlotCell<MaybeUninit<T>>]>,
    mask: usize,
    head: Padded<AtomicUsize>,
    tail: Padded<AtomicUsize>,
    /// The producer is gone: once empty, the ring stays empty.
    closed: AtomicBool,
}

// SAFETY: a slot is written only by the producer while it is free (tail - head < cap) and read
// only by the consumer once published (head < tail); the atomics order those accesses.
unsafe impl<T: Send> Sync for Shared<T> {}
unsafe impl<T: Send> Send for Shared<T> {}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        // The last owner: both sides are gone, and their stores happened before (Arc's drop).
        let mut h = self.head.0.load(Ordering::Acquire);
        let t = self.tail.0.load(Ordering::Acquire);
        while h != t {
            // SAFETY: slots in head..tail hold published, unconsumed values.
            self.slots[h & self.mask].with_mut(|v| unsafe { (*v).assume_init_drop() });
            h = h.wrapping_add(1);
        }
    }
}

pub struct Producer<T> {
    s: Arc<Shared<T>>,
    tail: usize,
    head_cache: Cell<usize>,
}

pub struct Consumer<T> {
    s: Arc<Shared<T>>,
    head: usize,
    tail_cache: Cell<usize>,
}

/// Most slots a ring may have.
pub const MAX_CAPACITY: usize = 1 << 20;

/// A ring of at least `capacity` slots (rounded up to a power of two, 2..=[`MAX_CAPACITY`]).
pub fn ring<T>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    let cap = capacity.clamp(2, MAX_CAPACITY).next_power_of_two();
    let slots = (0..cap)
        .map(|_| SlotCell::new(MaybeUninit::uninit()))
        .collect();
    let s = Arc::new(Shared {
        slots,
        mask: cap - 1,
        head: Padded(AtomicUsize::new(0)),
        tail: Padded(AtomicUsize::new(0)),
        closed: AtomicBool::new(false),
    });
    (
        Producer {
            s: s.clone(),
            tail: 0,
            head_cache: Cell::new(0),
        },
        Consumer {
            s,
            head: 0,
            tail_cache: Cell::new(0),
        },
    )
}

impl<T> Producer<T> {
    pub fn capacity(&self) -> usize {
        self.s.mask + 1
    }

    /// Append `v`, or give it back when the ring is full.
    pub fn try_push(&mut self, v: T) -> Result<(), T> {
        let cap = self.s.mask + 1;
        if self.tail.wrapping_sub(self.head_cache.get()) >= cap {
            self.head_cache.set(self.s.head.0.load(Ordering::Acquire));
            if self.tail.wrapping_sub(self.head_cache.get()) >= cap {
                return Err(v);
            }
        }
        // SAFETY: the slot is free (checked above) and only this producer writes slots.
        self.s.slots[self.tail & self.s.mask].with_mut(|s| unsafe { (*s).write(v) });
        self.tail = self.tail.wrapping_add(1);
        self.s.tail.0.store(self.tail, Ordering::Release);
        Ok(())
    }

    /// Append `v`, waiting while the ring is full (spinning briefly, then yielding). Returns the
    /// number of times it found the ring full.
    pub fn push(&mut self, mut v: T) -> u64 {
        let mut waits = 0;
        loop {
            match self.try_push(v) {
                Ok(()) => return waits,
                Err(back) => {
                    v = back;
                    waits += 1;
                    backoff(waits);
                }
            }
        }
    }

    /// Slots in use (as the producer sees them).
    pub fn len(&self) -> usize {
        self.tail
            .wrapping_sub(self.s.head.0.load(Ordering::Acquire))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> Drop for Producer<T> {
    fn drop(&mut self) {
        self.s.closed.store(true, Ordering::Release);
    }
}

impl<T> Consumer<T> {
    /// The oldest value, if any.
    pub fn try_pop(&mut self) -> Option<T> {
        if self.head == self.tail_cache.get() {
            self.tail_cache.set(self.s.tail.0.load(Ordering::Acquire));
            if self.head == self.tail_cache.get() {
                return None;
            }
        }
        // SAFETY: head < tail: the slot was published by the producer and not yet consumed.
        let v =
            self.s.slots[self.head & self.s.mask].with_mut(|s| unsafe { (*s).assume_init_read() });
        self.head = self.head.wrapping_add(1);
        self.s.head.0.store(self.head, Ordering::Release);
        Some(v)
    }

    /// The oldest value, waiting for one; `None` once the producer is gone and the ring empty.
    /// `waits` counts the times the ring was found empty.
    pub fn pop(&mut self, waits: &mut u64) -> Option<T> {
        let mut n = 0;
        loop {
            if let Some(v) = self.try_pop() {
                return Some(v);
            }
            if self.s.closed.load(Ordering::Acquire) {
                // Values published before the close are visible after the Acquire.
                return self.try_pop();
            }
            n += 1;
            *waits += 1;
            backoff(n);
        }
    }

    pub fn len(&self) -> usize {
        self.s
            .tail
            .0
            .load(Ordering::Acquire)
            .wrapping_sub(self.head)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Spin a little, then give the core away (the host may have fewer free cores than threads).
#[inline]
pub fn backoff(n: u64) {
    if cfg!(loom) {
        // loom explores the other thread's steps only when this one yields.
        sync::yield_now();
    } else if n < 64 {
        std::hint::spin_loop();
    } else if n < 256 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fifo_and_full() {
        let (mut p, mut c) = ring::<u32>(4);
        assert_eq!(p.capacity(), 4);
        for i in 0..4 {
            assert!(p.try_push(i).is_ok());
        }
        assert_eq!(p.try_push(9), Err(9));
        assert_eq!(c.try_pop(), Some(0));
        assert!(p.try_push(4).is_ok());
        let got: Vec<u32> = std::iter::from_fn(|| c.try_pop()).collect();
        assert_eq!(got, vec![1, 2, 3, 4]);
        assert!(c.is_empty());
    }

    #[test]
    fn values_left_in_the_ring_are_dropped_once() {
        let item = Arc::new(());
        {
            let (mut p, _c) = ring::<Arc<()>>(8);
            for _ in 0..5 {
                p.push(item.clone());
            }
            assert_eq!(Arc::strong_count(&item), 6);
        }
        assert_eq!(Arc::strong_count(&item), 1);
    }

    proptest::proptest! {
        /// Any sequence of pushes and pops on one thread behaves as a bounded FIFO queue of
        /// the ring's capacity (a push on a full ring gives its value back), and what is left
        /// is dropped with the ring.
        #[test]
        fn behaves_as_a_bounded_fifo(cap in 1usize..9, ops in proptest::collection::vec(0u8..3, 0..200)) {
            let (mut p, mut c) = ring::<u32>(cap);
            let cap = p.capacity();
            let mut model = std::collections::VecDeque::new();
            for (i, op) in ops.into_iter().enumerate() {
                let i = i as u32;
                if op < 2 {
                    let r = p.try_push(i);
                    if model.len() < cap {
                        proptest::prop_assert_eq!(r, Ok(()));
                        model.push_back(i);
                    } else {
                        proptest::prop_assert_eq!(r, Err(i));
                    }
                } else {
                    proptest::prop_assert_eq!(c.try_pop(), model.pop_front());
                }
                proptest::prop_assert_eq!(p.len(), model.len());
                proptest::prop_assert_eq!(c.len(), model.len());
            }
        }
    }

    /// Two threads, a small ring that is often full and often empty: every value arrives once,
    /// in order, and the consumer ends when the producer is gone.
    #[test]
    fn two_threads_in_order_no_loss() {
        let (mut p, mut c) = ring::<u64>(8);
        let n = 200_000u64;
        let h = std::thread::spawn(move || {
            for i in 0..n {
                p.push(i);
            }
        });
        let mut waits = 0;
        let mut expect = 0;
        while let Some(v) = c.pop(&mut waits) {
            assert_eq!(v, expect);
            expect += 1;
        }
        h.join().unwrap();
        assert_eq!(expect, n);
    }
}

/// Model checks (`RUSTFLAGS="--cfg loom" cargo test -p pktflow-runtime --release --lib loom`):
/// loom runs each body under every interleaving of its two threads and every value the
/// orderings let a load see, and fails on a data race on a slot (a slot read before its write
/// is visible, or written while the consumer may still read it), a leak or a double drop.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::atomic::AtomicUsize as Count;
    use loom::thread;

    fn model(f: impl Fn() + Sync + Send + 'static) {
        let mut b = loom::model::Builder::new();
        // Interleavings with up to 3 preemptions (loom's advice for loops; the bugs of a
        // two-party protocol need one or two).
        b.preemption_bound.get_or_insert(3);
        b.check(f);
    }

    /// Three values through a 2-slot ring: the producer finds it full, the consumer empty;
    /// every value arrives once and in order, and `pop` ends only after the last one.
    #[test]
    fn loom_push_pop_full_empty_close() {
        model(|| {
            let (mut p, mut c) = ring::<u32>(2);
            let h = thread::spawn(move || {
                for i in 0..3 {
                    p.push(i);
                }
                // Dropping the producer closes the ring.
            });
            let mut waits = 0;
            let mut got = Vec::new();
            while let Some(v) = c.pop(&mut waits) {
                got.push(v);
            }
            h.join().unwrap();
            assert_eq!(got, vec![0, 1, 2]);
        });
    }

    /// `try_push` on a full ring gives the value back, and succeeds again once the consumer has
    /// taken one; `try_pop` sees a value only once it is completely written.
    #[test]
    fn loom_try_push_try_pop() {
        model(|| {
            let (mut p, mut c) = ring::<Box<u32>>(2);
            let h = thread::spawn(move || {
                let mut pushed = 0u32;
                let mut full = 0;
                while pushed < 3 {
                    match p.try_push(Box::new(pushed)) {
                        Ok(()) => pushed += 1,
                        Err(v) => {
                            assert_eq!(*v, pushed, "the value given back");
                            // (The consumer may have taken one since: len is a snapshot.)
                            assert!(p.len() <= 2, "never more than the capacity");
                            full += 1;
                            thread::yield_now();
                        }
                    }
                }
                full
            });
            let mut next = 0;
            while next < 3 {
                match c.try_pop() {
                    Some(v) => {
                        assert_eq!(*v, next);
                        next += 1;
                    }
                    None => thread::yield_now(),
                }
            }
            h.join().unwrap();
            assert!(c.try_pop().is_none());
        });
    }

    struct Counted(loom::sync::Arc<Count>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Values still in the ring when both sides are gone (in either order, on two threads)
    /// are dropped exactly once, and the ones taken by the consumer are not dropped again.
    #[test]
    fn loom_values_left_dropped_once() {
        model(|| {
            let drops = loom::sync::Arc::new(Count::new(0));
            let (mut p, mut c) = ring::<Counted>(2);
            let d = drops.clone();
            let h = thread::spawn(move || {
                for _ in 0..2 {
                    let _ = p.try_push(Counted(d.clone()));
                }
            });
            let taken = c.try_pop();
            drop(c);
            h.join().unwrap();
            drop(taken);
            assert_eq!(drops.load(Ordering::Relaxed), 2);
        });
    }
}
