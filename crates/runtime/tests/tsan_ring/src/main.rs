//! The ring under ThreadSanitizer: the same source file as the runtime's (`#[path]`), two
//! threads passing boxed values through a small ring (full and empty all the time, each value
//! allocated by the producer and freed by the consumer), then rings dropped with values left
//! while the producer is still on another thread. ThreadSanitizer reports any access to a slot
//! or to a value's memory that the ring's Release/Acquire pairs do not order.
#[path = "../../../src/ring.rs"]
#[allow(dead_code)]
mod ring;

use std::sync::Arc;

fn main() {
    let (mut p, mut c) = ring::ring::<Box<u64>>(8);
    let n = 200_000u64;
    let h = std::thread::spawn(move || {
        for i in 0..n {
            p.push(Box::new(i));
        }
    });
    let mut waits = 0;
    let mut expect = 0;
    while let Some(v) = c.pop(&mut waits) {
        assert_eq!(*v, expect);
        expect += 1;
    }
    h.join().unwrap();
    assert_eq!(expect, n);
    let item = Arc::new(());
    let rounds = 2_000;
    for _ in 0..rounds {
        let (mut p, mut c) = ring::ring::<Arc<()>>(4);
        let it = item.clone();
        let h = std::thread::spawn(move || {
            for _ in 0..3 {
                let _ = p.try_push(it.clone());
            }
        });
        // Take one if it is there, then drop the consumer while the producer may still push.
        drop(c.try_pop());
        drop(c);
        h.join().unwrap();
    }
    assert_eq!(
        Arc::strong_count(&item),
        1,
        "a value leaked or dropped twice"
    );
    println!(
        "ok: {n} values in order ({waits} empty waits), {rounds} rings dropped with values left"
    );
}
