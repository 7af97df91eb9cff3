//! No heap allocation per step: a counting global allocator (per thread) shows that the
//! number of allocations made by `integrate` does not grow with the number of steps, with
//! state events, time events and both output modes exercised, for every method (Radau5:
//! Jacobians, LU factorisations and Newton iterations included).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use drivelink_solver::{
    integrate, EventAction, EventCause, EventKind, HybridSystem, Method, OutputKind, Settings,
    SystemError,
};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(|c| c.get())
}

/// Oscillator whose guard flips sign with a mode at every zero crossing of x (a state event
/// every half period), plus a sample-hit time event every 0.1 s. Output is summed, not
/// stored.
struct Busy {
    mode: f64,
    sample: f64,
    sum: f64,
    outputs: u64,
}

impl HybridSystem for Busy {
    fn n_states(&self) -> usize {
        2
    }
    fn n_guards(&self) -> usize {
        2
    }
    fn derivatives(&mut self, _t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = x[1];
        dx[1] = -4.0 * x[0];
    }
    fn guards(&mut self, _t: f64, x: &[f64], g: &mut [f64]) {
        g[0] = self.mode * x[0];
        g[1] = 10.0 + x[1];
    }
    fn next_time_event(&self, t: f64) -> f64 {
        let mut k = (t / self.sample).floor() + 1.0;
        while k * self.sample <= t {
            k += 1.0;
        }
        k * self.sample
    }
    fn handle_event(
        &mut self,
        _t: f64,
        _x: &mut [f64],
        c: EventCause<'_>,
    ) -> Result<EventAction, SystemError> {
        if c.kind == EventKind::State {
            self.mode = -self.mode;
        }
        Ok(EventAction::Continue)
    }
    fn guard_name(&self, i: usize) -> String {
        format!("busy.g{i}")
    }
    fn output(&mut self, t: f64, x: &[f64], _k: OutputKind) {
        self.sum += t + x[0];
        self.outputs += 1;
    }
}

fn count(method: Method, stop: f64, interval: Option<f64>) -> (u64, u64, u64) {
    let s = Settings {
        method,
        stop_time: stop,
        output_interval: interval,
        ..Settings::default()
    };
    let mut sys = Busy {
        mode: 1.0,
        sample: 0.1,
        sum: 0.0,
        outputs: 0,
    };
    let mut x = vec![1.0, 0.0];
    let before = allocs();
    let out = integrate(&mut sys, &mut x, &s);
    let after = allocs();
    let stats = match out {
        Ok(o) => o.stats,
        Err(f) => panic!("{}", f.error),
    };
    (after - before, stats.steps, stats.events)
}

#[test]
fn allocations_do_not_grow_with_steps() {
    for method in [
        Method::Dopri5,
        Method::Dop853,
        Method::Rk4 { step: 1e-3 },
        Method::Radau5,
        Method::Auto,
    ] {
        for interval in [None, Some(0.01)] {
            let (a_short, steps_short, ev_short) = count(method, 5.0, interval);
            let (a_long, steps_long, ev_long) = count(method, 100.0, interval);
            assert!(steps_long > 10 * steps_short, "{method:?}");
            assert!(ev_long > 10 * ev_short && ev_short > 0, "{method:?}");
            assert_eq!(
                a_short, a_long,
                "{method:?} {interval:?}: allocations grow with steps"
            );
            // Setup only: the explicit kernels' stage buffers; Radau5 adds its Jacobian,
            // two iteration matrices with pivots and their pattern masks (a column and a
            // row mask each, and the shared pattern), the states' partition (two index
            // lists, the non-zeros of J_QP and their row starts, the zero-column flags,
            // two gather buffers), stage and Jacobian work buffers.
            let bound = match method {
                Method::Radau5 | Method::Auto => 80,
                _ => 30,
            };
            assert!(a_short < bound, "{method:?}: {a_short} setup allocations");
        }
    }
}
