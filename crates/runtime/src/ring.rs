//! A bounded single-producer single-consumer ring (Lamport's queue with cached indices).
//!
//! The producer owns `tail`, the consumer owns `head`; each index sits on its own cache line
//! (128-byte aligned, covering adjacent-line prefetch) so the two threads do not false-share.
//! The producer publishes a slot with a Release store of `tail`; the consumer sees it with an
//! Acquire load, and frees it with a Release store of `head` that the producer Acquire-loads.
//! Each side caches the other's index and reloads it only when the ring looks full or empty.
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

#[repr(align(128))]
struct Padded<T>(T);

struct Shared<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
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
        let (mut h, t) = (*self.head.0.get_mut(), *self.tail.0.get_mut());
        while h != t {
            // SAFETY: slots in head..tail hold published, unconsumed values.
            unsafe { (*self.slots[h & self.mask].get()).assume_init_drop() };
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
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
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
        unsafe { (*self.s.slots[self.tail & self.s.mask].get()).write(v) };
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
        let v = unsafe { (*self.s.slots[self.head & self.s.mask].get()).assume_init_read() };
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
    if n < 64 {
        std::hint::spin_loop();
    } else if n < 256 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}

#[cfg(test)]
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
