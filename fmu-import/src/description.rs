//! What drivelink reads of an FMU's `modelDescription.xml` (FMI 3.0 or 2.0): the FMI
//! version, the Co-Simulation and Model Exchange interfaces, the unit definitions and the
//! variables, with the output dependencies, the continuous states and the event
//! indicators of the model structure. FMI 2.0's `Real` variables are read as
//! `Float64`, its `guid` as the instantiation token and its `ModelStructure` indices as
//! value references.

use std::collections::BTreeMap;

/// How a variable faces the importer (`causality`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Causality {
    Parameter,
    CalculatedParameter,
    StructuralParameter,
    Input,
    Output,
    Local,
    Independent,
}

impl Causality {
    fn parse(s: &str) -> Causality {
        match s {
            "parameter" => Causality::Parameter,
            "calculatedParameter" => Causality::CalculatedParameter,
            "structuralParameter" => Causality::StructuralParameter,
            "input" => Causality::Input,
            "output" => Causality::Output,
            "independent" => Causality::Independent,
            _ => Causality::Local,
        }
    }
    /// The spelling of the standard.
    pub fn as_str(self) -> &'static str {
        match self {
            Causality::Parameter => "parameter",
            Causality::CalculatedParameter => "calculated parameter",
            Causality::StructuralParameter => "structural parameter",
            Causality::Input => "input",
            Causality::Output => "output",
            Causality::Local => "local variable",
            Causality::Independent => "independent variable",
        }
    }
}

/// One model variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub value_reference: u32,
    pub causality: Causality,
    /// The element name: `Float64` (FMI 2.0 `Real`), `Int32`, `Boolean`, ...
    pub type_name: String,
    /// Whether it is an array (has `<Dimension>` children).
    pub array: bool,
    /// The `start` attribute of a scalar `Float64`.
    pub start: Option<f64>,
    /// The `unit` attribute.
    pub unit: Option<String>,
    /// `variability="constant"`.
    pub constant: bool,
}

/// A `<Unit>` of the unit definitions: the value in SI base units is
/// `factor·value + offset`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitDef {
    pub factor: f64,
    pub offset: f64,
}

/// The parts of the model description drivelink uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    pub fmi_version: String,
    pub model_name: String,
    pub instantiation_token: String,
    /// The Co-Simulation `modelIdentifier`, if the FMU offers Co-Simulation.
    pub cs_identifier: Option<String>,
    /// The Model Exchange `modelIdentifier`, if the FMU offers Model Exchange.
    pub me_identifier: Option<String>,
    /// The number of continuous states: the `ContinuousStateDerivative` elements (FMI
    /// 2.0: the `Derivatives` unknowns) of the model structure.
    pub n_states: usize,
    /// The event indicators: FMI 3.0's `EventIndicator` value references; FMI 2.0 has
    /// none to give (see [`Description::n_indicators`]).
    pub indicators: Vec<u32>,
    /// The number of event indicators (FMI 2.0: `numberOfEventIndicators`).
    pub n_indicators: usize,
    /// The interfaces offered (`ModelExchange`, `CoSimulation`, `ScheduledExecution`).
    pub interfaces: Vec<String>,
    /// `DefaultExperiment stepSize`.
    pub default_step: Option<f64>,
    pub units: BTreeMap<String, UnitDef>,
    pub variables: Vec<Variable>,
    /// Output value reference -> the value references it depends on (`None`: on
    /// everything, as when `dependencies` is absent).
    pub output_deps: BTreeMap<u32, Option<Vec<u32>>>,
}

fn attr_f64(n: roxmltree::Node, name: &str) -> Result<Option<f64>, String> {
    match n.attribute(name) {
        None => Ok(None),
        Some(s) => s.trim().parse::<f64>().map(Some).map_err(|_| {
            format!(
                "attribute {name}=\"{s}\" of <{}> is not a number",
                n.tag_name().name()
            )
        }),
    }
}

/// The FMI version of the document (also of FMI 1.0 and 2.0 descriptions), read before
/// anything else is interpreted.
pub fn fmi_version(xml: &str) -> Result<String, String> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| format!("is not XML: {e}"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "fmiModelDescription" {
        return Err(format!(
            "the root element is <{}>, not <fmiModelDescription>",
            root.tag_name().name()
        ));
    }
    root.attribute("fmiVersion")
        .map(str::to_string)
        .ok_or_else(|| "<fmiModelDescription> has no fmiVersion".into())
}

/// Parse an FMI 3.0 or 2.0 model description.
pub fn parse(xml: &str) -> Result<Description, String> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| format!("is not XML: {e}"))?;
    let root = doc.root_element();
    let version = root.attribute("fmiVersion").unwrap_or("");
    let v2 = version.starts_with("2.");
    let token = if v2 { "guid" } else { "instantiationToken" };
    let mut d = Description {
        fmi_version: version.to_string(),
        model_name: root.attribute("modelName").unwrap_or("").to_string(),
        instantiation_token: root.attribute(token).unwrap_or("").to_string(),
        cs_identifier: None,
        me_identifier: None,
        n_states: 0,
        indicators: Vec::new(),
        n_indicators: 0,
        interfaces: Vec::new(),
        default_step: None,
        units: BTreeMap::new(),
        variables: Vec::new(),
        output_deps: BTreeMap::new(),
    };
    for n in root.children().filter(roxmltree::Node::is_element) {
        match n.tag_name().name() {
            k @ ("ModelExchange" | "CoSimulation" | "ScheduledExecution") => {
                d.interfaces.push(k.to_string());
                let id = n.attribute("modelIdentifier").map(str::to_string);
                match k {
                    "CoSimulation" => d.cs_identifier = id,
                    "ModelExchange" => d.me_identifier = id,
                    _ => {}
                }
            }
            "DefaultExperiment" => d.default_step = attr_f64(n, "stepSize")?,
            "UnitDefinitions" => parse_units(n, &mut d.units)?,
            "ModelVariables" if v2 => parse_variables2(n, &mut d.variables)?,
            "ModelVariables" => parse_variables(n, &mut d.variables)?,
            "ModelStructure" if v2 => {
                parse_structure2(n, &d.variables, &mut d.output_deps)?;
                d.n_states = n
                    .children()
                    .filter(|c| c.has_tag_name("Derivatives"))
                    .flat_map(|c| c.children().filter(|u| u.has_tag_name("Unknown")))
                    .count();
            }
            "ModelStructure" => {
                parse_structure(n, &mut d.output_deps)?;
                d.n_states = n
                    .children()
                    .filter(|c| c.has_tag_name("ContinuousStateDerivative"))
                    .count();
                d.indicators = n
                    .children()
                    .filter(|c| c.has_tag_name("EventIndicator"))
                    .map(|c| {
                        c.attribute("valueReference")
                            .and_then(|s| s.trim().parse::<u32>().ok())
                            .ok_or("an <EventIndicator> of <ModelStructure> has no valid valueReference")
                    })
                    .collect::<Result<_, _>>()?;
                d.n_indicators = d.indicators.len();
            }
            _ => {}
        }
    }
    if v2 {
        d.n_indicators = match root.attribute("numberOfEventIndicators") {
            None => 0,
            Some(s) => s
                .trim()
                .parse::<usize>()
                .map_err(|_| format!("numberOfEventIndicators=\"{s}\" is not a count"))?,
        };
    }
    Ok(d)
}

fn parse_units(n: roxmltree::Node, units: &mut BTreeMap<String, UnitDef>) -> Result<(), String> {
    for u in n.children().filter(|c| c.has_tag_name("Unit")) {
        let Some(name) = u.attribute("name") else {
            continue;
        };
        let mut def = UnitDef {
            factor: 1.0,
            offset: 0.0,
        };
        if let Some(b) = u.children().find(|c| c.has_tag_name("BaseUnit")) {
            def.factor = attr_f64(b, "factor")?.unwrap_or(1.0);
            def.offset = attr_f64(b, "offset")?.unwrap_or(0.0);
        }
        units.insert(name.to_string(), def);
    }
    Ok(())
}

fn parse_variables(n: roxmltree::Node, vars: &mut Vec<Variable>) -> Result<(), String> {
    for v in n.children().filter(roxmltree::Node::is_element) {
        let type_name = v.tag_name().name().to_string();
        let name = v
            .attribute("name")
            .ok_or_else(|| format!("a <{type_name}> variable has no name"))?;
        let vr = v
            .attribute("valueReference")
            .and_then(|s| s.trim().parse::<u32>().ok())
            .ok_or_else(|| format!("variable '{name}' has no valid valueReference"))?;
        let array = v.children().any(|c| c.has_tag_name("Dimension"));
        let start = if type_name == "Float64" && !array {
            attr_f64(v, "start")?
        } else {
            None
        };
        vars.push(Variable {
            name: name.to_string(),
            value_reference: vr,
            causality: Causality::parse(v.attribute("causality").unwrap_or("local")),
            type_name,
            array,
            start,
            unit: v.attribute("unit").map(str::to_string),
            constant: v.attribute("variability") == Some("constant"),
        });
    }
    Ok(())
}

/// FMI 2.0: `<ScalarVariable name valueReference causality variability>` with one type
/// element (`<Real start unit/>`, `<Integer/>`, ...).
fn parse_variables2(n: roxmltree::Node, vars: &mut Vec<Variable>) -> Result<(), String> {
    for v in n.children().filter(|c| c.has_tag_name("ScalarVariable")) {
        let name = v
            .attribute("name")
            .ok_or("a <ScalarVariable> has no name")?;
        let vr = v
            .attribute("valueReference")
            .and_then(|s| s.trim().parse::<u32>().ok())
            .ok_or_else(|| format!("variable '{name}' has no valid valueReference"))?;
        let ty = v
            .children()
            .find(roxmltree::Node::is_element)
            .ok_or_else(|| format!("variable '{name}' has no type element"))?;
        let real = ty.has_tag_name("Real");
        vars.push(Variable {
            name: name.to_string(),
            value_reference: vr,
            causality: Causality::parse(v.attribute("causality").unwrap_or("local")),
            type_name: if real {
                "Float64".into()
            } else {
                ty.tag_name().name().to_string()
            },
            array: false,
            start: if real { attr_f64(ty, "start")? } else { None },
            unit: ty.attribute("unit").map(str::to_string),
            constant: v.attribute("variability") == Some("constant"),
        });
    }
    Ok(())
}

/// FMI 2.0: `<Outputs><Unknown index dependencies/></Outputs>`, 1-based indices into the
/// variables.
fn parse_structure2(
    n: roxmltree::Node,
    vars: &[Variable],
    deps: &mut BTreeMap<u32, Option<Vec<u32>>>,
) -> Result<(), String> {
    let vr_of = |t: &str| {
        t.trim()
            .parse::<usize>()
            .ok()
            .and_then(|i| i.checked_sub(1))
            .and_then(|i| vars.get(i))
            .map(|v| v.value_reference)
            .ok_or_else(|| format!("ModelStructure: '{t}' is not the index of a variable"))
    };
    let Some(outputs) = n.children().find(|c| c.has_tag_name("Outputs")) else {
        return Ok(());
    };
    for u in outputs.children().filter(|c| c.has_tag_name("Unknown")) {
        let vr = vr_of(u.attribute("index").unwrap_or(""))?;
        let list = match u.attribute("dependencies") {
            None => None,
            Some(s) => Some(
                s.split_whitespace()
                    .map(vr_of)
                    .collect::<Result<Vec<u32>, String>>()?,
            ),
        };
        deps.insert(vr, list);
    }
    Ok(())
}

fn parse_structure(
    n: roxmltree::Node,
    deps: &mut BTreeMap<u32, Option<Vec<u32>>>,
) -> Result<(), String> {
    for o in n.children().filter(|c| c.has_tag_name("Output")) {
        let Some(vr) = o
            .attribute("valueReference")
            .and_then(|s| s.trim().parse::<u32>().ok())
        else {
            return Err("an <Output> of <ModelStructure> has no valid valueReference".into());
        };
        let list = match o.attribute("dependencies") {
            None => None,
            Some(s) => Some(
                s.split_whitespace()
                    .map(|t| {
                        t.parse::<u32>().map_err(|_| {
                            format!("dependencies of output {vr}: '{t}' is not a value reference")
                        })
                    })
                    .collect::<Result<Vec<u32>, String>>()?,
            ),
        };
        deps.insert(vr, list);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="{abc}">
  <CoSimulation modelIdentifier="m_id" canHandleVariableCommunicationStepSize="true"/>
  <UnitDefinitions>
    <Unit name="rpm"><BaseUnit s="-1" factor="0.10471975511965977"/></Unit>
    <Unit name="degC"><BaseUnit K="1" offset="273.15"/></Unit>
  </UnitDefinitions>
  <DefaultExperiment startTime="0" stopTime="1" stepSize="0.01"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent"/>
    <Float64 name="k" valueReference="1" causality="parameter" variability="tunable" start="2.5"/>
    <Float64 name="u" valueReference="2" causality="input" start="1" unit="rpm"/>
    <Float64 name="a.y" valueReference="3" causality="output"/>
    <Int32 name="n" valueReference="4" causality="output"/>
    <Float64 name="v" valueReference="5" causality="output"><Dimension start="2"/></Float64>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="3" dependencies="2"/>
    <Output valueReference="4"/>
  </ModelStructure>
</fmiModelDescription>"#;

    #[test]
    fn variables_units_and_structure_are_read() {
        assert_eq!(fmi_version(XML).unwrap(), "3.0");
        let d = parse(XML).unwrap();
        assert_eq!(d.cs_identifier.as_deref(), Some("m_id"));
        assert_eq!(d.instantiation_token, "{abc}");
        assert_eq!(d.default_step, Some(0.01));
        assert_eq!(d.units["rpm"].factor, 0.10471975511965977);
        assert_eq!(d.units["degC"].offset, 273.15);
        assert_eq!(d.variables.len(), 6);
        let u = &d.variables[2];
        assert_eq!(
            (u.causality, u.start, u.unit.as_deref()),
            (Causality::Input, Some(1.0), Some("rpm"))
        );
        assert_eq!(d.variables[3].name, "a.y");
        assert!(d.variables[5].array);
        assert_eq!(d.output_deps[&3], Some(vec![2]));
        assert_eq!(d.output_deps[&4], None);
    }

    #[test]
    fn an_fmi2_description_is_read_with_reals_as_float64() {
        let xml = r#"<fmiModelDescription fmiVersion="2.0" modelName="m2" guid="{g}">
  <CoSimulation modelIdentifier="m2_id"/>
  <DefaultExperiment stepSize="0.5"/>
  <ModelVariables>
    <ScalarVariable name="u" valueReference="7" causality="input"><Real start="3" unit="rpm"/></ScalarVariable>
    <ScalarVariable name="n" valueReference="8" causality="output"><Integer/></ScalarVariable>
    <ScalarVariable name="y" valueReference="9" causality="output"><Real/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="2"/><Unknown index="3" dependencies="1"/></Outputs></ModelStructure>
</fmiModelDescription>"#;
        let d = parse(xml).unwrap();
        assert_eq!(d.instantiation_token, "{g}");
        assert_eq!(d.cs_identifier.as_deref(), Some("m2_id"));
        assert_eq!(d.default_step, Some(0.5));
        let u = &d.variables[0];
        assert_eq!(
            (
                u.type_name.as_str(),
                u.value_reference,
                u.start,
                u.unit.as_deref()
            ),
            ("Float64", 7, Some(3.0), Some("rpm"))
        );
        assert_eq!(d.variables[1].type_name, "Integer");
        assert_eq!(d.output_deps[&8], None);
        assert_eq!(d.output_deps[&9], Some(vec![7]));
    }

    #[test]
    fn model_exchange_states_and_indicators_are_read() {
        let xml = r#"<fmiModelDescription fmiVersion="3.0" modelName="b" instantiationToken="{b}">
  <ModelExchange modelIdentifier="ball_me"/>
  <ModelVariables>
    <Float64 name="h" valueReference="1" causality="output"/>
    <Float64 name="der(h)" valueReference="2" derivative="1"/>
    <Float64 name="v" valueReference="3"/>
    <Float64 name="der(v)" valueReference="4" derivative="3"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="1"/>
    <ContinuousStateDerivative valueReference="2"/>
    <ContinuousStateDerivative valueReference="4"/>
    <EventIndicator valueReference="1"/>
  </ModelStructure>
</fmiModelDescription>"#;
        let d = parse(xml).unwrap();
        assert_eq!(
            (d.me_identifier.as_deref(), d.cs_identifier.as_deref()),
            (Some("ball_me"), None)
        );
        assert_eq!((d.n_states, d.n_indicators), (2, 1));
        assert_eq!(d.indicators, [1]);
        let xml2 = r#"<fmiModelDescription fmiVersion="2.0" modelName="b" guid="{b}" numberOfEventIndicators="3">
  <ModelExchange modelIdentifier="b2"/>
  <ModelVariables>
    <ScalarVariable name="x" valueReference="0"><Real/></ScalarVariable>
    <ScalarVariable name="der(x)" valueReference="1"><Real derivative="1"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Derivatives><Unknown index="2"/></Derivatives></ModelStructure>
</fmiModelDescription>"#;
        let d = parse(xml2).unwrap();
        assert_eq!(d.me_identifier.as_deref(), Some("b2"));
        assert_eq!((d.n_states, d.n_indicators), (1, 3));
        let bad = xml2.replace("\"3\"", "\"three\"");
        assert!(parse(&bad).unwrap_err().contains("numberOfEventIndicators"));
    }

    #[test]
    fn an_fmi2_description_reports_its_version() {
        let xml = r#"<fmiModelDescription fmiVersion="2.0" modelName="x" guid="{g}"/>"#;
        assert_eq!(fmi_version(xml).unwrap(), "2.0");
        let e = fmi_version("<html/>").unwrap_err();
        assert!(e.contains("<html>"), "{e}");
    }
}
