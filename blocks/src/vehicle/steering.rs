//! `Steering`: steering ratio and Ackermann geometry, steering-wheel angle to road-wheel
//! steer angles.
//!
//! `wheel_angle[in]` (rad) -> `left[out]`, `right[out]` (rad, positive turns left). With
//! `δ = wheel_angle/ratio` and `k = ackermann·track/(2·wheelbase)`:
//! `cot δ_left = cot δ − k`, `cot δ_right = cot δ + k`, evaluated as
//! `δ_left = atan2(sin δ, cos δ − k·sin δ)` and `δ_right = atan2(sin δ, cos δ + k·sin δ)`
//! (the same cotangents, without the singularity at `δ = 0`, which gives 0). `ackermann`
//! 0 is parallel steer, 1 full Ackermann (the inner wheel turns more: both wheels' axes
//! meet on the rear axle's line).

use drivelink_core::{
    Block, BlockBuild, BlockDecl, BlockType, Cx, ParamError, ParamSpec, Params, PortDecl, Registry,
};

use super::finite;

pub(crate) fn register(r: &mut Registry) {
    r.register(steering_type());
}

/// The `Steering` block type: its parameters and how it is built.
fn steering_type() -> BlockType {
    BlockType {
        name: "Steering",
        category: "vehicle",
        doc: "Steering ratio and Ackermann geometry: δ = wheel_angle/ratio, cot δ_left = cot δ − ackermann·track/(2·wheelbase), cot δ_right = cot δ + ackermann·track/(2·wheelbase) (positive turns left).",
        ports_doc: "wheel_angle[in] -> left[out], right[out]",
        params: vec![
            ParamSpec::number("ratio", "1", 16.0, "steering wheel angle per road wheel angle (!= 0)"),
            ParamSpec::required("wheelbase", "m", "distance between the axles (> 0)"),
            ParamSpec::required("track", "m", "distance between the steered wheels (>= 0)"),
            ParamSpec::number("ackermann", "1", 1.0, "0 parallel steer, 1 full Ackermann"),
        ],
        build: BlockBuild::Primitive(build),
    }
}

fn build(p: &Params) -> Result<Box<dyn Block>, ParamError> {
    let ratio = finite(p, "ratio")?;
    if ratio == 0.0 {
        return Err(p.invalid("ratio", "must not be 0"));
    }
    let l = p.positive("wheelbase")?;
    let t = p.non_negative("track")?;
    let a = finite(p, "ackermann")?;
    let k = a * t / (2.0 * l);
    if !k.is_finite() {
        return Err(p.invalid(
            "track",
            format!("track/wheelbase must be finite, got {t}/{l}"),
        ));
    }
    Ok(Box::new(Steering { ratio, k }))
}

/// The steering block.
#[derive(Debug, Clone)]
pub struct Steering {
    ratio: f64,
    k: f64,
}

impl Steering {
    /// Road-wheel angles `(left, right)` for the steering-wheel angle `wheel_angle`.
    pub fn angles(&self, wheel_angle: f64) -> (f64, f64) {
        let a = wheel_angle / self.ratio;
        if a == 0.0 {
            // Straight ahead (most of a run): atan2(±0, 1) is the same ±0, without the
            // sine, cosine and two arc tangents.
            return (a, a);
        }
        let (s, c) = a.sin_cos();
        (s.atan2(c - self.k * s), s.atan2(c + self.k * s))
    }
}

impl Block for Steering {
    fn declare(&self) -> BlockDecl {
        let ports = vec![
            PortDecl::input("wheel_angle").with_unit("rad"),
            PortDecl::output("left").with_unit("rad"),
            PortDecl::output("right").with_unit("rad"),
        ];
        BlockDecl {
            ports,
            ..BlockDecl::default()
        }
    }
    fn outputs(&self, cx: &Cx, y: &mut [f64]) {
        let (l, r) = self.angles(cx.u(0));
        y[0] = l;
        y[1] = r;
    }
}
