//! The derivative evaluation allocates nothing after `compile()` (a counting allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use drivelink_core::compile;
use drivelink_solver::HybridSystem;

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn derivative_and_guard_evaluation_allocate_nothing_after_compile() {
    // The full car exercises signal blocks, the network with constraints and friction
    // joints, composite blocks and sensors.
    let d = drivelink_models::full_car(&drivelink_models::FullCarParams::default());
    let mut m = compile(&d, &drivelink_blocks::registry()).expect("compiles");
    let x = m.initial_state().to_vec();
    let mut dx = vec![0.0; m.n_states()];
    let mut g = vec![0.0; m.n_guards()];
    // Warm up once, then count.
    m.derivatives(0.0, &x, &mut dx);
    m.guards(0.0, &x, &mut g);
    let before = ALLOCS.load(Ordering::Relaxed);
    for k in 0..1000 {
        let t = k as f64 * 0.01;
        m.derivatives(t, &x, &mut dx);
        m.guards(t, &x, &mut g);
    }
    let after = ALLOCS.load(Ordering::Relaxed);
    assert_eq!(
        after - before,
        0,
        "{} allocations in 1000 evaluations",
        after - before
    );
    assert!(dx.iter().all(|v| v.is_finite()));
}
