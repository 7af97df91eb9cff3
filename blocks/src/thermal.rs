//! Thermal blocks: `HeatCapacitor`, `ThermalConductor`, `Convection`,
//! `FixedTemperature` (Modelica.Thermal.HeatTransfer). Heat ports carry a temperature (K)
//! and a heat flow (W, positive into the node); the network (nodes with and without heat
//! capacity, fixed temperatures) is solved by the kernel, see `drivelink_core::thermal`.

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, ParamSpec, PortDecl, Registry, ThermalDecl,
    VarDecl, VarSource,
};

/// Register the thermal blocks.
pub fn register(r: &mut Registry) {
    r.register(heat_capacitor_type());
    r.register(thermal_conductor_type());
    r.register(convection_type());
    r.register(fixed_temperature_type());
}

/// The `Convection` block type: its parameters and how it is built.
fn convection_type() -> BlockType {
    BlockType {
        name: "Convection",
        category: "thermal",
        doc: "Convective heat transfer from a solid to a fluid: Q_flow = Gc·(T_solid − T_fluid), Gc (W/K) from the input (negative values count as 0).",
        ports_doc: "Gc[in], solid[heat], fluid[heat]",
        params: vec![],
        build: BlockBuild::Primitive(|_p| { Ok(Box::new(Conductor { g: None })) }),
    }
}

/// The `HeatCapacitor` block type: its parameters and how it is built.
fn heat_capacitor_type() -> BlockType {
    BlockType {
        name: "HeatCapacitor",
        category: "thermal",
        doc: "Lumped heat capacity C on its port's thermal node: C·dT/dt = Σ heat flows into the node. Capacities on one node add up.",
        ports_doc: "port[heat]",
        params: vec![
            ParamSpec::required("C", "J/K", "heat capacity (> 0)"),
            ParamSpec::number("T0", "K", 293.15, "initial temperature (> 0)"),
        ],
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(HeatCapacitor {
                c: p.positive("C")?,
                t0: p.positive("T0")?,
            }))
        }),
    }
}

/// The `ThermalConductor` block type: its parameters and how it is built.
fn thermal_conductor_type() -> BlockType {
    BlockType {
        name: "ThermalConductor",
        category: "thermal",
        doc: "Heat conduction between two nodes: Q_flow = G·(T_a − T_b), from port_a to port_b.",
        ports_doc: "port_a[heat], port_b[heat]",
        params: vec![ParamSpec::required(
            "G",
            "W/K",
            "thermal conductance (>= 0)",
        )],
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(Conductor {
                g: Some(p.non_negative("G")?),
            }))
        }),
    }
}

/// The `FixedTemperature` block type: its parameters and how it is built.
fn fixed_temperature_type() -> BlockType {
    BlockType {
        name: "FixedTemperature",
        category: "thermal",
        doc: "Holds its port's thermal node at temperature T (an ambient); heat flowing into it leaves the model (audited as heat to ambient).",
        ports_doc: "port[heat]",
        params: vec![ParamSpec::required("T", "K", "temperature (> 0)")],
        build: BlockBuild::Primitive(|p| {
            Ok(Box::new(FixedTemperature {
                t: p.positive("T")?,
            }))
        }),
    }
}

/// `HeatCapacitor`.
#[derive(Debug, Clone)]
struct HeatCapacitor {
    c: f64,
    t0: f64,
}

impl Block for HeatCapacitor {
    fn declare(&self) -> BlockDecl {
        let variables = vec![
            VarDecl::new("T", VarSource::Custom(0), "K").doc("temperature of the node"),
            VarDecl::new("energy", VarSource::Custom(1), "J")
                .doc("heat stored since the start, C·(T − T0)"),
        ];
        let thermal = ThermalDecl {
            capacities: vec![(0, self.c, self.t0)],
            ..Default::default()
        };
        BlockDecl {
            ports: vec![PortDecl::heat("port")],
            variables,
            thermal,
            ..BlockDecl::default()
        }
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        let t = cx.temp(0).unwrap_or(f64::NAN);
        if i == 0 {
            t
        } else {
            self.c * (t - self.t0)
        }
    }
}

/// `ThermalConductor` (fixed `G`) and `Convection` (`Gc` from the input).
#[derive(Debug, Clone)]
struct Conductor {
    g: Option<f64>,
}

impl Conductor {
    fn ports_ix(&self) -> (usize, usize) {
        if self.g.is_some() {
            (0, 1)
        } else {
            (1, 2)
        }
    }
    fn flow(&self, cx: &Cx) -> f64 {
        let (a, b) = self.ports_ix();
        match (cx.temp(a), cx.temp(b)) {
            (Some(ta), Some(tb)) => self.conductance(0, cx) * (ta - tb),
            _ => f64::NAN,
        }
    }
}

impl Block for Conductor {
    fn declare(&self) -> BlockDecl {
        let ports = match self.g {
            Some(_) => vec![PortDecl::heat("port_a"), PortDecl::heat("port_b")],
            None => vec![
                PortDecl::input("Gc").with_unit("W/K"),
                PortDecl::heat("solid"),
                PortDecl::heat("fluid"),
            ],
        };
        let variables = vec![
            VarDecl::new("Q_flow", VarSource::Custom(0), "W").doc(if self.g.is_some() {
                "heat flow from port_a to port_b"
            } else {
                "heat flow from the solid to the fluid"
            }),
            VarDecl::new("dT", VarSource::Custom(1), "K").doc(if self.g.is_some() {
                "T_a − T_b"
            } else {
                "T_solid − T_fluid"
            }),
        ];
        let thermal = ThermalDecl {
            conductors: vec![self.ports_ix()],
            ..Default::default()
        };
        BlockDecl {
            ports,
            variables,
            thermal,
            ..BlockDecl::default()
        }
    }
    fn conductance(&self, _k: usize, cx: &Cx) -> f64 {
        match self.g {
            Some(g) => g,
            None => cx.u(0).max(0.0),
        }
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        if i == 0 {
            self.flow(cx)
        } else {
            let (a, b) = self.ports_ix();
            match (cx.temp(a), cx.temp(b)) {
                (Some(ta), Some(tb)) => ta - tb,
                _ => f64::NAN,
            }
        }
    }
}

/// `FixedTemperature`.
#[derive(Debug, Clone)]
struct FixedTemperature {
    t: f64,
}

impl Block for FixedTemperature {
    fn declare(&self) -> BlockDecl {
        let thermal = ThermalDecl {
            fixed: vec![(0, self.t)],
            ..Default::default()
        };
        BlockDecl {
            ports: vec![PortDecl::heat("port")],
            variables: vec![
                VarDecl::new("T", VarSource::Custom(0), "K").doc("the fixed temperature")
            ],
            thermal,
            ..BlockDecl::default()
        }
    }
    fn var(&self, cx: &Cx, _i: usize) -> f64 {
        cx.temp(0).unwrap_or(self.t)
    }
}
