//! The FMU's variables and its `modelDescription.xml` (FMI 3.0 or FMI 2.0).
//!
//! Both the exporter (which writes the XML) and the runtime library (which serves the
//! values) derive the variable list from the netlist with [`variables`], so their value
//! references agree: `0` is the independent variable `time`, then every numeric
//! top-level netlist parameter (in netlist order), then every top-level `Inport` block
//! (an input named after the block, in netlist order), then every logged variable (in the
//! order of the run's result columns). [`model_variables`] appends what Model Exchange
//! needs: every continuous state (named after what it is, [`Model::state_owner`]), its
//! derivative (`der(NAME)`) and every event indicator (`guard(NAME)`, the guard's name).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use drivelink_core::compile::{resolve_parameters, resolve_params, Scope, ScopeVal};
use drivelink_core::units::{parse_unit, Dim};
use drivelink_core::{Diagram, Error, Model, ParamError, Plan};
use drivelink_solver::HybridSystem;

/// The model identifier: the runtime library's file name without `lib` and `.so`.
pub const MODEL_IDENTIFIER: &str = "drivelink_fmi";

/// What a variable is to the importer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Causality {
    /// The independent variable (time).
    Independent,
    /// A parameter (a top-level netlist parameter), `tunable`: set before the end of
    /// initialization, the run instance is built with it; set later (Co-Simulation:
    /// between steps; Model Exchange: in Event Mode), the model is rebuilt with it and
    /// keeps its run state (see `instance/state.rs`).
    Parameter,
    /// An input (a top-level `Inport` block).
    Input,
    /// An output (a logged variable).
    Output,
    /// A continuous state of the model (Model Exchange).
    State,
    /// The derivative of the state with this value reference.
    Derivative(u32),
    /// An event indicator: a guard of the model.
    Indicator,
}

/// Which FMI interfaces an FMU offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    CoSimulation,
    ModelExchange,
    Both,
}

impl Kind {
    /// The kind of `--kind` (`cs`, `me`, `both`).
    pub fn parse(s: &str) -> Option<Kind> {
        match s.trim() {
            "cs" => Some(Kind::CoSimulation),
            "me" => Some(Kind::ModelExchange),
            "both" => Some(Kind::Both),
            _ => None,
        }
    }
    pub fn has_cs(self) -> bool {
        self != Kind::ModelExchange
    }
    pub fn has_me(self) -> bool {
        self != Kind::CoSimulation
    }
    /// What it is called in messages.
    pub fn label(self) -> &'static str {
        match self {
            Kind::CoSimulation => "Co-Simulation",
            Kind::ModelExchange => "Model Exchange",
            Kind::Both => "Model Exchange and Co-Simulation",
        }
    }
}

/// One FMU variable (all are `Float64`).
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub value_reference: u32,
    pub causality: Causality,
    /// The start value (SI) of a parameter or an input.
    pub start: Option<f64>,
    /// The SI unit (`kg*m^2`, `rad/s`), `None` when dimensionless.
    pub unit: Option<String>,
}

/// The FMU variables of the netlist `d` compiled to `plan` (see the module docs).
/// Parameters that are not numbers (text choices, arrays) are not exported.
pub fn variables(d: &Diagram, plan: &Plan) -> Result<Vec<Variable>, Error> {
    let scope: Scope = resolve_parameters(&d.parameters, &Scope::new(), &d.name)?;
    let mut vars = vec![Variable {
        name: "time".into(),
        value_reference: 0,
        causality: Causality::Independent,
        start: None,
        unit: Some("s".into()),
    }];
    for (name, _) in &d.parameters {
        let Some(ScopeVal::Q(q)) = scope.get(name) else {
            continue;
        };
        let unit = q.dim.filter(|d| *d != Dim::ONE).map(unit_name);
        vars.push(Variable {
            name: name.clone(),
            value_reference: vars.len() as u32,
            causality: Causality::Parameter,
            start: Some(q.value),
            unit,
        });
    }
    for (name, start, unit) in inports(d, &scope)? {
        vars.push(Variable {
            name,
            value_reference: vars.len() as u32,
            causality: Causality::Input,
            start: Some(start),
            unit,
        });
    }
    let empty = plan.empty_result();
    for (name, unit) in empty.names.iter().zip(&empty.units) {
        vars.push(Variable {
            name: name.clone(),
            value_reference: vars.len() as u32,
            causality: Causality::Output,
            start: None,
            unit: unit.clone().filter(|u| u != "1" && !u.is_empty()),
        });
    }
    Ok(vars)
}

/// The top-level `Inport` blocks of `d` in netlist order: name, start value (SI) and
/// declared unit, their parameters resolved in the netlist's `scope` as the compiler
/// resolves them (so their errors are the compiler's).
fn inports(d: &Diagram, scope: &Scope) -> Result<Vec<(String, f64, Option<String>)>, Error> {
    use drivelink_blocks::signal::inport;
    let specs = inport::param_specs();
    let mut out = Vec::new();
    for b in d.blocks.iter().filter(|b| b.type_name == inport::TYPE_NAME) {
        let p = resolve_params(&b.name, &b.type_name, &specs, &b.params, scope).map_err(|e| {
            e.into_iter().next().unwrap_or_else(|| {
                Error::Param(ParamError {
                    block: b.name.clone(),
                    param: "value".into(),
                    message: "cannot be resolved".into(),
                })
            })
        })?;
        let (start, unit) = inport::settings(&p).map_err(Error::Param)?;
        out.push((b.name.clone(), start, unit));
    }
    Ok(out)
}

/// [`variables`] followed by the continuous states of `model` (a run instance of `plan`),
/// their derivatives and the event indicators (see the module docs). Names are made
/// unique by appending ` #2`, ` #3`, ... to a repeated one.
pub fn model_variables(d: &Diagram, plan: &Plan, model: &Model) -> Result<Vec<Variable>, Error> {
    let mut vars = variables(d, plan)?;
    let mut taken: std::collections::HashSet<String> =
        vars.iter().map(|v| v.name.clone()).collect();
    let mut unique = |name: String| {
        let mut n = name.clone();
        let mut k = 1;
        while !taken.insert(n.clone()) {
            k += 1;
            n = format!("{name} #{k}");
        }
        n
    };
    let nx = model.n_states();
    let first_state = vars.len() as u32;
    let names: Vec<String> = (0..nx).map(|i| unique(model.state_owner(i))).collect();
    let push = |vars: &mut Vec<Variable>, name: String, causality: Causality| {
        vars.push(Variable {
            name,
            value_reference: vars.len() as u32,
            causality,
            start: None,
            unit: None,
        });
    };
    for name in &names {
        push(&mut vars, name.clone(), Causality::State);
    }
    for (i, name) in names.iter().enumerate() {
        let der = unique(format!("der({name})"));
        push(
            &mut vars,
            der,
            Causality::Derivative(first_state + i as u32),
        );
    }
    for i in 0..model.n_guards() {
        let name = unique(format!("guard({})", model.guard_name(i)));
        push(&mut vars, name, Causality::Indicator);
    }
    Ok(vars)
}

/// The name of an SI unit of dimension `d`: `N`, `N*m`, `W`, else the base units
/// (`kg*m^2`).
fn unit_name(d: Dim) -> String {
    match d.derived_name() {
        Some(n) => n.replace('·', "*"),
        None => d.ascii(),
    }
}

/// A token that changes with the shipped netlist's text (FNV-1a, 64 bit), checked by
/// the runtime at instantiation.
pub fn instantiation_token(model_json: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in model_json {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{{drivelink-{h:016x}}}")
}

/// Escape text for an XML attribute.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\n' => o.push_str("&#10;"),
            c if (c as u32) < 0x20 && c != '\t' => {}
            c => o.push(c),
        }
    }
    o
}

/// The `<Unit>` element of a unit name, `None` if it does not parse.
fn unit_element(name: &str) -> Option<String> {
    let u = parse_unit(name).ok()?;
    let d = u.dim;
    let mut base = String::new();
    for (attr, e) in [("kg", d.kg), ("m", d.m), ("s", d.s), ("A", d.a), ("K", d.k)] {
        if e != 0 {
            let _ = write!(base, " {attr}=\"{e}\"");
        }
    }
    if u.factor != 1.0 {
        let _ = write!(base, " factor=\"{:e}\"", u.factor);
    }
    Some(format!(
        "    <Unit name=\"{}\">\n      <BaseUnit{base}/>\n    </Unit>\n",
        esc(name)
    ))
}

/// What `modelDescription.xml` says besides the variables.
pub struct Description<'a> {
    pub model_name: &'a str,
    pub description: &'a str,
    pub token: &'a str,
    pub start_time: f64,
    pub stop_time: f64,
    /// Whether the model's run state can be saved and restored (every block saves its
    /// own; an imported `Fmu` block does not): then its parameters are `tunable` and the
    /// FMU can get and set its state; otherwise the parameters are `fixed` and it cannot.
    pub saves_state: bool,
}

/// The `<Unit>` elements of the units of `vars` (by name), the same in FMI 3.0 and 2.0.
fn unit_elements<'a>(vars: impl IntoIterator<Item = &'a Variable>) -> BTreeMap<String, String> {
    let mut units = BTreeMap::new();
    for u in vars.into_iter().filter_map(|v| v.unit.as_deref()) {
        if let Some(el) = unit_element(u) {
            units.insert(u.to_string(), el);
        }
    }
    units
}

/// The `<UnitDefinitions>` element of `units` (nothing when there are none).
fn unit_definitions(units: &BTreeMap<String, String>) -> String {
    if units.is_empty() {
        return String::new();
    }
    let mut x = String::from("  <UnitDefinitions>\n");
    for el in units.values() {
        x.push_str(el);
    }
    x.push_str("  </UnitDefinitions>\n");
    x
}

/// The causality and variability attributes of a variable (parameters are tunable when
/// the model `saves_state`, see [`Description::saves_state`]).
fn causality_variability(c: Causality, saves_state: bool) -> (&'static str, &'static str) {
    match c {
        Causality::Independent => ("independent", "continuous"),
        Causality::Parameter if saves_state => ("parameter", "tunable"),
        Causality::Parameter => ("parameter", "fixed"),
        Causality::Input => ("input", "continuous"),
        Causality::Output => ("output", "continuous"),
        Causality::State | Causality::Derivative(_) | Causality::Indicator => {
            ("local", "continuous")
        }
    }
}

/// The FMI 3.0 `modelDescription.xml` of a Co-Simulation FMU with `vars`.
pub fn model_description(info: &Description, vars: &[Variable]) -> String {
    model_description_of(info, vars, Kind::CoSimulation)
}

/// The FMI 3.0 `modelDescription.xml` of an FMU of `kind` with `vars` (Model Exchange
/// needs those of [`model_variables`]: its states, derivatives and event indicators).
pub fn model_description_of(info: &Description, vars: &[Variable], kind: Kind) -> String {
    let units = unit_elements(vars);
    let mut x = String::new();
    x.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"{}\" description=\"{}\" \
         instantiationToken=\"{}\" generationTool=\"drivelink {}\">",
        esc(info.model_name),
        esc(info.description),
        esc(info.token),
        env!("CARGO_PKG_VERSION")
    );
    if kind.has_me() {
        let _ = writeln!(
            x,
            "  <ModelExchange modelIdentifier=\"{MODEL_IDENTIFIER}\" \
             needsCompletedIntegratorStep=\"false\" canGetAndSetFMUState=\"{}\" \
             canSerializeFMUState=\"false\"/>",
            info.saves_state
        );
    }
    if kind.has_cs() {
        let _ = writeln!(
            x,
            "  <CoSimulation modelIdentifier=\"{MODEL_IDENTIFIER}\" \
             canHandleVariableCommunicationStepSize=\"true\" canGetAndSetFMUState=\"{}\" \
             canSerializeFMUState=\"false\" hasEventMode=\"false\"/>",
            info.saves_state
        );
    }
    x.push_str(&unit_definitions(&units));
    let _ = writeln!(
        x,
        "  <DefaultExperiment startTime=\"{:?}\" stopTime=\"{:?}\"/>",
        info.start_time, info.stop_time
    );
    x.push_str("  <ModelVariables>\n");
    for v in vars {
        x.push_str(&variable_element(v, &units, info.saves_state));
    }
    x.push_str("  </ModelVariables>\n  <ModelStructure>\n");
    x.push_str(&model_structure(vars));
    x.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
    x
}

/// The FMI 3.0 `<ModelStructure>` elements, in the order the schema wants: the outputs,
/// the state derivatives, the initial unknowns (outputs, states, derivatives: all
/// computed in initialization), the event indicators.
fn model_structure(vars: &[Variable]) -> String {
    let mut x = String::new();
    let of = |f: fn(&Causality) -> bool| {
        vars.iter()
            .filter(move |v| f(&v.causality))
            .map(|v| v.value_reference)
    };
    let mut list = |element: &str, vrs: &mut dyn Iterator<Item = u32>| {
        for vr in vrs {
            let _ = writeln!(x, "    <{element} valueReference=\"{vr}\"/>");
        }
    };
    list("Output", &mut of(|c| *c == Causality::Output));
    list(
        "ContinuousStateDerivative",
        &mut of(|c| matches!(c, Causality::Derivative(_))),
    );
    list(
        "InitialUnknown",
        &mut of(|c| {
            matches!(
                c,
                Causality::Output | Causality::State | Causality::Derivative(_)
            )
        }),
    );
    list("EventIndicator", &mut of(|c| *c == Causality::Indicator));
    x
}

/// The `<Float64>` element of one variable (its unit only when it is defined).
fn variable_element(v: &Variable, units: &BTreeMap<String, String>, saves_state: bool) -> String {
    let (causality, variability) = causality_variability(v.causality, saves_state);
    let mut attrs = format!(
        "name=\"{}\" valueReference=\"{}\" causality=\"{causality}\" variability=\"{variability}\"",
        esc(&v.name),
        v.value_reference
    );
    if let Some(s) = v.start {
        let _ = write!(attrs, " start=\"{s:?}\"");
    }
    if let Some(u) = v.unit.as_deref().filter(|u| units.contains_key(*u)) {
        let _ = write!(attrs, " unit=\"{}\"", esc(u));
    }
    if let Causality::Derivative(of) = v.causality {
        let _ = write!(attrs, " derivative=\"{of}\"");
    }
    format!("    <Float64 {attrs}/>\n")
}

/// The FMI 2.0 `modelDescription.xml` of a Co-Simulation FMU with `vars`.
pub fn model_description_fmi2(info: &Description, vars: &[Variable]) -> String {
    model_description_fmi2_of(info, vars, Kind::CoSimulation)
}

/// The FMI 2.0 `modelDescription.xml` of an FMU of `kind` with `vars`: the `guid` is the
/// instantiation token, every variable but the event indicators (FMI 2.0 only counts
/// them: `numberOfEventIndicators`) a `<ScalarVariable>` with a `<Real>` (start, unit,
/// and `derivative` = the 1-based index of its state), the outputs in `ModelStructure`
/// `Outputs` (depending on nothing without states and inputs; on every state and input
/// otherwise), the derivatives in `Derivatives`, and outputs, states and derivatives in
/// `InitialUnknowns` (they are computed in initialization mode).
pub fn model_description_fmi2_of(info: &Description, vars: &[Variable], kind: Kind) -> String {
    let indicators = vars
        .iter()
        .filter(|v| v.causality == Causality::Indicator)
        .count();
    let vars: Vec<&Variable> = vars
        .iter()
        .filter(|v| v.causality != Causality::Indicator)
        .collect();
    let units = unit_elements(vars.iter().copied());
    let mut x = String::new();
    x.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        x,
        "<fmiModelDescription fmiVersion=\"2.0\" modelName=\"{}\" guid=\"{}\" \
         description=\"{}\" generationTool=\"drivelink {}\" \
         numberOfEventIndicators=\"{indicators}\">",
        esc(info.model_name),
        esc(info.token),
        esc(info.description),
        env!("CARGO_PKG_VERSION")
    );
    if kind.has_me() {
        let _ = writeln!(
            x,
            "  <ModelExchange modelIdentifier=\"{MODEL_IDENTIFIER}\" \
             completedIntegratorStepNotNeeded=\"true\" \
             canBeInstantiatedOnlyOncePerProcess=\"false\" \
             canNotUseMemoryManagementFunctions=\"true\" canGetAndSetFMUstate=\"{}\" \
             canSerializeFMUstate=\"false\" providesDirectionalDerivative=\"false\"/>",
            info.saves_state
        );
    }
    if kind.has_cs() {
        let _ = writeln!(
            x,
            "  <CoSimulation modelIdentifier=\"{MODEL_IDENTIFIER}\" \
             canHandleVariableCommunicationStepSize=\"true\" canInterpolateInputs=\"false\" \
             maxOutputDerivativeOrder=\"0\" canRunAsynchronuously=\"false\" \
             canBeInstantiatedOnlyOncePerProcess=\"false\" \
             canNotUseMemoryManagementFunctions=\"true\" canGetAndSetFMUstate=\"{}\" \
             canSerializeFMUstate=\"false\" providesDirectionalDerivative=\"false\"/>",
            info.saves_state
        );
    }
    x.push_str(&unit_definitions(&units));
    x.push_str(
        "  <LogCategories>\n    <Category name=\"logEvents\"/>\n    \
         <Category name=\"logStatusError\"/>\n  </LogCategories>\n",
    );
    let _ = writeln!(
        x,
        "  <DefaultExperiment startTime=\"{:?}\" stopTime=\"{:?}\"/>",
        info.start_time, info.stop_time
    );
    x.push_str("  <ModelVariables>\n");
    // 1-based indices into ModelVariables, by value reference.
    let index: BTreeMap<u32, usize> = vars
        .iter()
        .enumerate()
        .map(|(k, v)| (v.value_reference, k + 1))
        .collect();
    for (k, v) in vars.iter().enumerate() {
        let (causality, variability) = causality_variability(v.causality, info.saves_state);
        let _ = writeln!(
            x,
            "    <!-- index {} -->\n    <ScalarVariable name=\"{}\" valueReference=\"{}\" \
             causality=\"{causality}\" variability=\"{variability}\">",
            k + 1,
            esc(&v.name),
            v.value_reference
        );
        let mut real = String::new();
        if let Some(s) = v.start {
            let _ = write!(real, " start=\"{s:?}\"");
        }
        if let Some(u) = v.unit.as_deref().filter(|u| units.contains_key(*u)) {
            let _ = write!(real, " unit=\"{}\"", esc(u));
        }
        if let Some(i) = match v.causality {
            Causality::Derivative(of) => index.get(&of),
            _ => None,
        } {
            let _ = write!(real, " derivative=\"{i}\"");
        }
        let _ = writeln!(x, "      <Real{real}/>\n    </ScalarVariable>");
    }
    x.push_str("  </ModelVariables>\n  <ModelStructure>\n");
    x.push_str(&model_structure_fmi2(&vars));
    x.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
    x
}

/// The FMI 2.0 `<ModelStructure>` content of `vars` (as listed in `ModelVariables`).
fn model_structure_fmi2(vars: &[&Variable]) -> String {
    let mut x = String::new();
    let indices = |f: fn(&Causality) -> bool| -> Vec<usize> {
        (0..vars.len())
            .filter(|&k| f(&vars[k].causality))
            .map(|k| k + 1)
            .collect()
    };
    let outputs = indices(|c| *c == Causality::Output);
    let derivatives = indices(|c| matches!(c, Causality::Derivative(_)));
    let initial = indices(|c| {
        matches!(
            c,
            Causality::Output | Causality::State | Causality::Derivative(_)
        )
    });
    // Without states and inputs an output depends on nothing; with them, on every state
    // and input (the attribute left out: FMI 2.0's "depends on all").
    let has_inputs = vars.iter().any(|v| v.causality == Causality::Input);
    let depends = if derivatives.is_empty() && !has_inputs {
        " dependencies=\"\""
    } else {
        ""
    };
    let mut list = |element: &str, items: &[usize], attrs: &str| {
        if items.is_empty() {
            return;
        }
        let _ = writeln!(x, "    <{element}>");
        for i in items {
            let _ = writeln!(x, "      <Unknown index=\"{i}\"{attrs}/>");
        }
        let _ = writeln!(x, "    </{element}>");
    };
    list("Outputs", &outputs, depends);
    list("Derivatives", &derivatives, "");
    list("InitialUnknowns", &initial, "");
    x
}
