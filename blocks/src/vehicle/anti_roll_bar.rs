//! `AntiRollBar`: a torsion bar between the two `WheelCollider`s of one axle.
//!
//! Ports: `body[frame]` (the car's body), `c_left[in]`, `c_right[in]` (the wheels'
//! `compression` outputs, m) -> `left[out]`, `right[out]` (N, to the wheels' `bar_force`
//! inputs). With `kb = stiffness` (N/m at the wheels):
//!
//! ```text
//! left = kb·(c_left − c_right)      right = −left      E = ½·kb·(c_left − c_right)²
//! ```
//!
//! Each wheel adds its force to its suspension force before the ground's `max(0, ·)` (a
//! bar can unload a wheel, the ground still never pulls), so the tire loads include the
//! bar's load transfer. With springs `k` per wheel and track `t`, a roll `φ` compresses
//! one side by `t·φ/2` and extends the other as much, and the axle's roll stiffness is
//! `(k + 2·kb)·t²/2`.
//!
//! # Who applies the bar's load
//!
//! The bar's part of the two ground forces, `left` and `right` (vertical, `/(ẑ_body·ẑ)` as
//! the wheel's normal force), is a couple: equal and opposite forces at the two wheels'
//! force points, whose difference in body axes is `(0, track, c_left − c_right)` for two
//! mirrored wheels (same `center` x and z, `suspension_distance`, `radius` and
//! `force_app_point_distance`; `track` the difference of their `center` y). The bar
//! applies this couple to the body itself, and each wheel applies the rest of its load
//! (exactly its own suspension force while the ground pushes, see `WheelCollider`). So the
//! bar's work is its own in the energy audit: the couple's power is
//! `−kb·(c_left − c_right)·(ċ_left − ċ_right) = −dE/dt`, and the bar's potential energy
//! `E` makes its loss zero (to the solver's tolerance): its energy is stored, the wheels'
//! losses are theirs alone.
//!
//! # On a road: the share along the road's normal
//!
//! On a `Road` each wheel's own share acts along the road's normal `n` at its contact, and
//! its compression changes at `ċ = −(n·v_G)/(n·ẑ_body)`. The bar's share must follow: the
//! force `bar·n/(n·ẑ_body)` at the contact point `G` is the one whose power is
//! `−bar·ċ` for every motion of the body, so with it the bar's power is again
//! `−kb·(c_left − c_right)·(ċ_left − ċ_right) = −dE/dt` (a vertical share would make the
//! bar's books hold the road's work through its twist). The optional inputs
//! `hit_{left,right}_{x,y,z}` and `normal_{left,right}_{x,y,z}` (the wheels' `hit_*` and
//! `normal_*` variables) give the contacts; with them the bar applies
//! `+bar·n_l/(n_l·ẑ_body)` at the left contact and `−bar·n_r/(n_r·ẑ_body)` at the right
//! (a couple only when the normals agree). A wheel whose normal reads 0 (in the air) takes
//! the vertical `bar/(ẑ_body·ẑ)` at the point mirrored from the other contact by the arm
//! `(0, track, c_left − c_right)`; both 0 (unwired, or both in the air): the couple above,
//! bit for bit. The contact inputs enter the forces only (no feedthrough).
//!
//! A wheel off the ground (or unloaded to zero by the bar) applies the reaction to the
//! bar's part, so that corner carries no load. The wheels have no vertical state (their
//! hubs follow the ground): while a wheel is in the air or unloaded, the bar still winds
//! up with the ray's compression, and the audit books the difference in that wheel's loss.
//!
//! A kerb step under one wheel jumps its compression at the located crossing, and with it
//! the bar's twist and energy `E`: no force does work across the event, so the energy
//! audit books that jump as impact loss (it takes every block's stored energy on both
//! sides of each event), not as the bar's loss.

use drivelink_core::frame::{add, cross, dot, scale, FrameState, V3};
use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, Forces, MechDecl, ParamError, ParamSpec, Params,
    PortDecl, Registry, VarDecl, VarSource,
};

use super::wheel_collider::AXIS_DOWN;

const BODY: usize = 0;
const IN_LEFT: usize = 0;
const IN_RIGHT: usize = 1;
/// The first of the contact inputs: `hit_left_{x,y,z}`, `normal_left_{x,y,z}`, then the
/// same for the right wheel.
const IN_CONTACT: usize = 2;
/// The names of the contact inputs, in input order.
const CONTACT_INPUTS: [&str; 12] = [
    "hit_left_x",
    "hit_left_y",
    "hit_left_z",
    "normal_left_x",
    "normal_left_y",
    "normal_left_z",
    "hit_right_x",
    "hit_right_y",
    "hit_right_z",
    "normal_right_x",
    "normal_right_y",
    "normal_right_z",
];

pub(crate) fn register(r: &mut Registry) {
    r.register(anti_roll_bar_type());
}

/// The `AntiRollBar` block type: its parameters and how it is built.
fn anti_roll_bar_type() -> BlockType {
    BlockType {
        name: "AntiRollBar",
        category: "vehicle",
        doc: "Anti-roll bar between the two WheelColliders of one axle: adds ±stiffness·(c_left − c_right) to their suspension forces (outputs left, right to the wheels' bar_force inputs) and applies that load to the body itself (a couple over the track; on a road, with the contact inputs wired, along each wheel's road normal at its contact), so its energy ½·stiffness·(c_left − c_right)² is stored energy in the audit. Axle roll stiffness (spring + 2·stiffness)·track²/2.",
        ports_doc: "body[frame], c_left[in], c_right[in] (the wheels' compression outputs, m), hit_left_x[in], hit_left_y[in], hit_left_z[in], normal_left_x[in], normal_left_y[in], normal_left_z[in], hit_right_x[in], hit_right_y[in], hit_right_z[in], normal_right_x[in], normal_right_y[in], normal_right_z[in] (optional, 0: the wheels' hit_* and normal_* variables; wired, the bar's share of each load acts along that wheel's road normal at its contact, as the wheel's own share, so the bar's work stays its own on bumps and grades; 0 normals: a vertical couple) -> left[out], right[out] (N, to the wheels' bar_force inputs)",
        params: vec![
            ParamSpec::required("stiffness", "N/m", "bar stiffness at the wheels (>= 0): the force on each wheel per metre of compression difference"),
            ParamSpec::required("track", "m", "lateral distance between the two wheels' suspension axes, y_left − y_right of their center (> 0); the two wheels must otherwise mirror each other (same center x and z, suspension_distance, radius, force_app_point_distance)"),
        ],
        build: BlockBuild::Primitive(build),
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let stiffness = p.non_negative("stiffness")?;
    let track = p.positive("track")?;
    for (n, v) in [("stiffness", stiffness), ("track", track)] {
        if !v.is_finite() {
            return Err(p.invalid(n, format!("must be finite, got {v}")));
        }
    }
    Ok(Box::new(AntiRollBar { stiffness, track }))
}

/// The anti-roll bar block.
#[derive(Debug, Clone)]
pub struct AntiRollBar {
    stiffness: f64,
    track: f64,
}

impl AntiRollBar {
    /// The compression difference `c_left − c_right`, m.
    fn twist(&self, cx: &Cx) -> f64 {
        cx.u(IN_LEFT) - cx.u(IN_RIGHT)
    }
}

/// The body point (body axes from the centre of mass) at world point `p`.
fn body_point(st: &FrameState, p: V3) -> V3 {
    st.to_body(add(p, scale(-1.0, st.pos())))
}

impl AntiRollBar {
    /// Wheel `i`'s contact on the contact inputs (0 left, 1 right): its world contact
    /// point and the direction `n/(n·ẑ_body)` of the bar's share of its load (the road's
    /// normal `n` scaled so that its component along the suspension axis is 1); `None`
    /// while the normal inputs read 0 (unconnected, or the wheel in the air).
    fn contact(&self, cx: &Cx, i: usize, zb: V3) -> Option<(V3, V3)> {
        let u = |k: usize| cx.u(IN_CONTACT + 6 * i + k);
        let n = [u(3), u(4), u(5)];
        let nz = dot(n, zb);
        (nz > AXIS_DOWN).then(|| ([u(0), u(1), u(2)], scale(1.0 / nz, n)))
    }
}

impl Block for AntiRollBar {
    fn declare(&self) -> BlockDecl {
        let mut ports = vec![
            PortDecl::frame("body"),
            PortDecl::input("c_left").with_unit("m"),
            PortDecl::input("c_right").with_unit("m"),
            PortDecl::output("left").with_unit("N"),
            PortDecl::output("right").with_unit("N"),
        ];
        // The wheels' contacts (their hit_* and normal_* variables), optional.
        ports.extend(CONTACT_INPUTS.iter().map(|n| {
            PortDecl::optional_input(*n, 0.0).with_unit(if n.starts_with("hit") {
                "m"
            } else {
                "1"
            })
        }));
        let variables = vec![VarDecl::new("energy", VarSource::Custom(0), "J")
            .doc("energy stored in the bar, ½·stiffness·(c_left − c_right)²")];
        let mech = MechDecl {
            has_forces: true,
            ..Default::default()
        };
        BlockDecl {
            ports,
            variables,
            mech,
            ..BlockDecl::default()
        }
        .feedthrough_by(
            |input| // The contact inputs enter the forces only, not the outputs.
        input < IN_CONTACT,
        )
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let f = self.stiffness * self.twist(cx);
        y[0] = f;
        y[1] = -f;
    }
    fn forces(&self, cx: &Cx, f: &mut Forces) {
        let dc = self.twist(cx);
        let st = cx.frame(BODY);
        let r = st.rotation();
        let zb = [r[0][2], r[1][2], r[2][2]];
        if dc == 0.0 || !(zb[2] > AXIS_DOWN) {
            return;
        }
        let bar = self.stiffness * dc;
        let arm = [0.0, self.track, dc];
        let vertical = [0.0, 0.0, 1.0 / zb[2]];
        // Each share along its wheel's `n/(n·ẑ_body)` at its contact point; a wheel in
        // the air: vertical, at the point mirrored from the other wheel's.
        let (pl, dl, pr, dr) = match (self.contact(cx, 0, zb), self.contact(cx, 1, zb)) {
            (None, None) => {
                // The vertical force on the left wheel's force point, the opposite one on
                // the right's: the couple of the arm between them (body axes).
                let force = st.to_body([0.0, 0.0, bar / zb[2]]);
                f.add_frame_moment(BODY, cross(arm, force));
                return;
            }
            (Some((pl, dl)), Some((pr, dr))) => (body_point(st, pl), dl, body_point(st, pr), dr),
            (Some((pl, dl)), None) => {
                let pl = body_point(st, pl);
                (pl, dl, add(pl, scale(-1.0, arm)), vertical)
            }
            (None, Some((pr, dr))) => {
                let pr = body_point(st, pr);
                (add(pr, arm), vertical, pr, dr)
            }
        };
        f.add_frame_force(BODY, pl, scale(bar, dl));
        f.add_frame_force(BODY, pr, scale(-bar, dr));
    }
    fn potential_energy(&self, cx: &Cx) -> f64 {
        let dc = self.twist(cx);
        0.5 * self.stiffness * dc * dc
    }
    fn var(&self, cx: &Cx, _i: usize) -> f64 {
        self.potential_energy(cx)
    }
}
