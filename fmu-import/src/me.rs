//! What the `Fmu` block needs of a Model Exchange instance on top of the calls both
//! interfaces share ([`CoSim`]'s initialization, reset, getters and setters), whatever its
//! FMI version ([`ModelExchange`], implemented by [`crate::fmi3::Instance`] and
//! [`crate::fmi2::Instance`] when they were instantiated for Model Exchange), and the
//! interface an FMU is imported as ([`Kind`]).

use crate::cosim::{CallError, CoSim};

/// The interface an FMU is imported as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Co-Simulation: the FMU steps itself, at communication points.
    CoSimulation,
    /// Model Exchange: drivelink's solver integrates the FMU's states.
    ModelExchange,
}

impl Kind {
    /// The name of the interface in the standard (`CoSimulation`, `ModelExchange`).
    pub fn interface(self) -> &'static str {
        match self {
            Kind::CoSimulation => "CoSimulation",
            Kind::ModelExchange => "ModelExchange",
        }
    }
}

/// What `fmi3UpdateDiscreteStates` (FMI 2.0: `fmi2NewDiscreteStates`) reports.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EventInfo {
    /// Call again: the event iteration has not converged.
    pub needs_update: bool,
    /// The FMU asks to end the simulation.
    pub terminate: bool,
    /// The continuous states changed (read them back).
    pub states_changed: bool,
    /// The next time event of the FMU, if it has one.
    pub next_time: Option<f64>,
}

/// One Model Exchange instance, driven by the block. After
/// [`CoSim::exit_initialization`] the instance is in Event Mode.
pub trait ModelExchange: CoSim {
    /// The numbers of continuous states and event indicators as the FMU itself gives them
    /// (`fmi3GetNumberOfContinuousStates`, `fmi3GetNumberOfEventIndicators`); `None` for
    /// FMI 2.0, which has no such functions (the model description's counts hold).
    fn sizes(&mut self) -> Result<Option<(usize, usize)>, CallError>;
    /// `fmi3SetTime`.
    fn set_time(&mut self, t: f64) -> Result<(), CallError>;
    /// `fmi3SetContinuousStates`.
    fn set_states(&mut self, x: &[f64]) -> Result<(), CallError>;
    /// `fmi3GetContinuousStates`.
    fn get_states(&mut self, x: &mut [f64]) -> Result<(), CallError>;
    /// `fmi3GetContinuousStateDerivatives` (FMI 2.0: `fmi2GetDerivatives`).
    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), CallError>;
    /// `fmi3GetEventIndicators`.
    fn get_indicators(&mut self, z: &mut [f64]) -> Result<(), CallError>;
    /// `fmi3EnterEventMode`.
    fn enter_event_mode(&mut self) -> Result<(), CallError>;
    /// `fmi3UpdateDiscreteStates` (FMI 2.0: `fmi2NewDiscreteStates`): one step of the
    /// event iteration.
    fn update_discrete_states(&mut self) -> Result<EventInfo, CallError>;
    /// `fmi3EnterContinuousTimeMode`.
    fn enter_continuous_time_mode(&mut self) -> Result<(), CallError>;
}
