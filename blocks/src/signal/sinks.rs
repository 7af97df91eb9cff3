//! Sinks: StopSimulation.

use drivelink_core::{Block, BlockBuild, BlockDecl, BlockType, Cx, EventCx, PortDecl, Registry};

/// Register the sinks.
pub fn register(r: &mut Registry) {
    r.register(stop_simulation_type());
}

/// The `StopSimulation` block type: its parameters and how it is built.
fn stop_simulation_type() -> BlockType {
    BlockType {
        name: "StopSimulation",
        category: "signal",
        doc: "Stops the run (status \"stopped\") at the first instant the input is non-zero; a continuous input leaving zero is located by the guard −|u|, a switching input (Relational, Step) stops at its own event.",
        ports_doc: "u[in]",
        params: vec![],
        build: BlockBuild::Primitive(|_| Ok(Box::new(StopSimulation))),
    }
}

/// `StopSimulation`: guard `−|u|` (valid while u = 0) locates a continuous input leaving
/// zero; `update_modes` requests the stop whenever `u != 0` at an event instant, which
/// also covers inputs that jump at another block's event (Relational, Step, ...).
#[derive(Debug, Clone)]
pub struct StopSimulation;

impl Block for StopSimulation {
    fn declare(&self) -> BlockDecl {
        BlockDecl {
            ports: vec![PortDecl::input("u")],
            pure_guards: true,
            ..BlockDecl::default()
        }
        .with_guards(&["nonzero"])
    }
    fn guards(&self, cx: &Cx, g: &mut [f64]) {
        g[0] = -cx.u(0).abs();
    }
    fn update_modes(&mut self, cx: &mut EventCx) -> bool {
        let u = cx.u(0);
        if u != 0.0 && !u.is_nan() {
            cx.request_stop();
        }
        false
    }
}
