//! Vehicle blocks: `Tire` (Unity wheel-collider friction curve on slip velocity, as a
//! friction joint of the network), `VehicleBody` (longitudinal dynamics with drag, grade and
//! lagged load transfer), `Differential` (open, locked, viscous, clutch pack, torque bias),
//! `BrakeSystem` (pedal/handbrake to per-wheel torques with bias) and `Abs` (discrete-time
//! anti-lock modulator); and the vehicle-dynamics blocks on a 6-DOF `frame` body:
//! `RigidBody`, `WheelCollider` (Unity semantics; friction curves or Pacejka's Magic
//! Formula, [`magic_formula`]), `AntiRollBar` (between the two wheels of an axle),
//! `TorqueSplitter` (a centre differential with an unequal split), `Aero`, `Steering`;
//! the maneuver inputs `SineWithDwell` and `SteerRamp` (open-loop steering), the
//! closed-loop drivers `LongitudinalDriver` (speed controller) and `PathFollower` (steering
//! along a path, [`path`]), the driving aids `Esc` (stability control) and `Tcs`
//! (traction control), `Road` (the surface under the wheels), and the drive-cycle and
//! electric-drive blocks `DriveCycle`, `Battery` and `ElectricMachine`.
//!
//! Conventions shared by the vehicle blocks (SI units):
//! - Tire slip velocity `slip = r·w_hub − v_body` (m/s): positive when the wheel spins
//!   faster than the road (driving), negative when braking.
//! - A tire's `force` is the longitudinal force on the body (+ accelerates the car); the hub
//!   receives `−force·r`.
//! - Brake torques are magnitudes (N·m, >= 0); feed them to `Brake` with `max_torque = 1`,
//!   `peak = 1` so that `f` is the torque itself.
//!
//! Rest and locking (exact rest, no chatter) come from the network's stuck/slip event
//! machine: tire contacts and differential locks are friction joints (see each submodule;
//! a tire sticks only in its low-speed regime, at speed it follows its curve through zero
//! slip).

use drivelink_core::{ParamError, Params, Registry};

pub mod abs;
pub mod aero;
pub mod anti_roll_bar;
pub mod battery;
pub mod body;
pub mod brakes;
pub mod differential;
pub mod drive_cycle;
pub mod driver;
pub mod electric_machine;
pub mod esc;
pub mod magic_formula;
pub mod path;
pub mod path_follower;
pub mod power_split;
pub mod regen_blend;
pub mod rigid_body;
pub mod road;
pub mod steer_inputs;
pub mod steering;
pub mod tcs;
pub mod tire;
pub mod torque_splitter;
pub mod wheel_collider;

pub use tire::{curve_slip, friction_curve};

/// A finite number parameter.
pub(crate) fn finite(p: &Params, name: &str) -> Result<f64, ParamError> {
    let v = p.num(name)?;
    if !v.is_finite() {
        return Err(p.invalid(name, format!("must be finite, got {v}")));
    }
    Ok(v)
}

/// A finite number parameter in `[lo, hi]`.
pub(crate) fn in_range(p: &Params, name: &str, lo: f64, hi: f64) -> Result<f64, ParamError> {
    let v = finite(p, name)?;
    if !(lo..=hi).contains(&v) {
        return Err(p.invalid(name, format!("must be in [{lo}, {hi}], got {v}")));
    }
    Ok(v)
}

/// Register the vehicle blocks.
pub fn register(r: &mut Registry) {
    tire::register(r);
    body::register(r);
    differential::register(r);
    torque_splitter::register(r);
    brakes::register(r);
    rigid_body::register(r);
    wheel_collider::register(r);
    road::register(r);
    anti_roll_bar::register(r);
    aero::register(r);
    steering::register(r);
    esc::register(r);
    tcs::register(r);
    steer_inputs::register(r);
    driver::register(r);
    path_follower::register(r);
    drive_cycle::register(r);
    battery::register(r);
    electric_machine::register(r);
    power_split::register(r);
    regen_blend::register(r);
}
