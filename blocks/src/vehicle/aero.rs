//! `Aero`: aerodynamic drag and downforce on a rigid body.
//!
//! Port: `frame[frame]`. At the body point `center` (body axes) moving at the world
//! velocity `V` through still air: drag `−½·ρ·drag_area·|V|·V` (opposing the motion) and
//! downforce `½·ρ·lift_area·|V|²` along the body's −z axis (negative `lift_area` lifts).
//! Variables: `drag` (N, magnitude), `downforce` (N), `airspeed` (m/s).

use drivelink_core::frame::{add, dot, scale, V3};
use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, Forces, MechDecl, ParamDefault, ParamError,
    ParamKind, ParamSpec, Params, PortDecl, Registry, VarDecl, VarSource,
};

use super::finite;

pub(crate) fn register(r: &mut Registry) {
    r.register(aero_type());
}

/// The `Aero` block type: its parameters and how it is built.
fn aero_type() -> BlockType {
    BlockType {
        name: "Aero",
        category: "vehicle",
        doc: "Aerodynamic drag −½·ρ·drag_area·|V|·V and downforce ½·ρ·lift_area·|V|² along the body's −z axis, both at the body point center (V its velocity, still air).",
        ports_doc: "frame[frame]",
        params: vec![
            ParamSpec::number("drag_area", "m^2", 0.7, "Cd·A (>= 0)"),
            ParamSpec::number("air_density", "kg/m^3", 1.2, "air density ρ (>= 0)"),
            ParamSpec::number("lift_area", "m^2", 0.0, "Cl·A of the downforce (positive presses the body down)"),
            ParamSpec {
                name: "center",
                kind: ParamKind::Vector { unit: "m" },
                default: ParamDefault::Value(serde_json::json!([0.0, 0.0, 0.0])),
                doc: "[x, y, z] of the point where the forces act, body axes from the centre of mass",
            },
        ],
        build: BlockBuild::Primitive(build),
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let c = p.vector("center")?;
    if c.len() != 3 || c.iter().any(|v| !v.is_finite()) {
        return Err(p.invalid(
            "center",
            format!("must be [x, y, z], three finite numbers, got {c:?}"),
        ));
    }
    let drag_area = p.non_negative("drag_area")?;
    let rho = p.non_negative("air_density")?;
    for (n, v) in [("drag_area", drag_area), ("air_density", rho)] {
        if !v.is_finite() {
            return Err(p.invalid(n, format!("must be finite, got {v}")));
        }
    }
    let lift_area = finite(p, "lift_area")?;
    Ok(Box::new(Aero::new(
        drag_area,
        rho,
        lift_area,
        [c[0], c[1], c[2]],
    )))
}

/// The aerodynamics block.
#[derive(Debug, Clone)]
pub struct Aero {
    rho: f64,
    lift_area: f64,
    center: V3,
    /// `−½·ρ·drag_area` and `½·ρ·lift_area`, computed once at build as the loads used to
    /// compute them at every call (the same operations, so the same bits).
    drag_k: f64,
    lift_k: f64,
}

impl Aero {
    /// The block with its checked parameters.
    fn new(drag_area: f64, rho: f64, lift_area: f64, center: V3) -> Aero {
        let q = 0.5 * rho;
        Aero {
            rho,
            lift_area,
            center,
            drag_k: -q * drag_area,
            lift_k: q * lift_area,
        }
    }
    /// Drag (world force) and downforce (world force) at the point velocity `v`, with
    /// `down` the world direction of the body's −z axis.
    pub fn loads(&self, v: V3, down: V3) -> (V3, V3) {
        let v2 = dot(v, v);
        (
            scale(self.drag_k * v2.sqrt(), v),
            scale(self.lift_k * v2, down),
        )
    }
    /// Drag, downforce and the velocity of `center` (world axes) at this instant. Always
    /// inlined: as a call its three vectors went through memory.
    #[inline(always)]
    fn at(&self, cx: &Cx) -> (V3, V3, V3) {
        let st = cx.frame(0);
        let v = st.point_velocity(self.center);
        // The body's −z axis in world axes: minus the rotation's third column.
        let r = st.rotation();
        let down = [-r[0][2], -r[1][2], -r[2][2]];
        let (d, l) = self.loads(v, down);
        (d, l, v)
    }
}

impl Block for Aero {
    fn declare(&self) -> BlockDecl {
        let variables = vec![
            VarDecl::new("drag", VarSource::Custom(0), "N").doc("drag force magnitude"),
            VarDecl::new("downforce", VarSource::Custom(1), "N")
                .doc("downforce along the body's −z axis (negative: lift)"),
            VarDecl::new("airspeed", VarSource::Custom(2), "m/s")
                .doc("speed of the point center through the air"),
        ];
        let mech = MechDecl {
            has_forces: true,
            ..Default::default()
        };
        BlockDecl {
            ports: vec![PortDecl::frame("frame")],
            variables,
            mech,
            ..BlockDecl::default()
        }
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        let (d, l, v) = self.at(cx);
        f.add_frame_force_moving(0, self.center, add(d, l), v);
    }
    fn var(&self, cx: &Cx, i: usize) -> f64 {
        let (d, _, v) = self.at(cx);
        let v = dot(v, v).sqrt();
        match i {
            0 => dot(d, d).sqrt(),
            1 => 0.5 * self.rho * self.lift_area * v * v,
            2 => v,
            _ => f64::NAN,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loads are `−½·ρ·drag_area·|V|·V` and `½·ρ·lift_area·|V|²·down` to the bit,
    /// evaluated left to right as written.
    #[test]
    fn loads_are_the_drag_and_downforce_formulas_to_the_bit() {
        let (drag_area, rho, lift_area): (f64, f64, f64) = (0.7, 1.2, 0.3);
        let a = Aero::new(drag_area, rho, lift_area, [0.1, 0.0, -0.2]);
        let down = [0.02, -0.01, -0.9997499687]; // an arbitrary attitude's −z axis
        for v in [[27.5, -0.4, 0.03], [-3.0, 1.7, -0.2], [0.0_f64, 0.0, 0.0]] {
            let v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
            let drag = -(0.5 * rho) * drag_area * v2.sqrt();
            let lift = 0.5 * rho * lift_area * v2;
            let (d, l) = a.loads(v, down);
            for i in 0..3 {
                assert_eq!(d[i].to_bits(), (drag * v[i]).to_bits(), "drag {i} at {v:?}");
                assert_eq!(
                    l[i].to_bits(),
                    (lift * down[i]).to_bits(),
                    "lift {i} at {v:?}"
                );
            }
        }
        // Drag opposes the motion: its power is −½·ρ·drag_area·|V|³.
        let v = [20.0, 0.0, 0.0];
        let (d, _) = a.loads(v, down);
        let want = -0.5 * rho * drag_area * 8000.0;
        assert!((dot(d, v) - want).abs() <= 4.0 * f64::EPSILON * want.abs());
    }
}
