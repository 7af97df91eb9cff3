//! `drivelink fmu`: the FMU archive of `mech_clutch_lock.json` holds the model
//! description, the runtime library under the model identifier's name and the netlist
//! (FMI 3.0 and FMI 2.0); a Model Exchange FMU declares the states, their derivatives
//! and the event indicators; unsupported kinds and versions are refused with a clear
//! message.

use std::path::{Path, PathBuf};
use std::process::Command;

fn drivelink() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drivelink"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn out_dir(name: &str) -> PathBuf {
    let d = root().join("target").join("cli_fmu").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The entries of a zip archive: (name, compressed size, uncompressed size), from its
/// central directory.
fn zip_entries(bytes: &[u8]) -> Vec<(String, u32, u32)> {
    let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]) as usize;
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
    let eocd = bytes.len() - 22;
    assert_eq!(u32_at(eocd), 0x0605_4b50, "end of central directory record");
    let n = u16_at(eocd + 10);
    let mut p = u32_at(eocd + 16) as usize;
    let mut out = Vec::new();
    for _ in 0..n {
        assert_eq!(u32_at(p), 0x0201_4b50, "central directory entry");
        let name_len = u16_at(p + 28);
        let extra = u16_at(p + 30) + u16_at(p + 32);
        let name = String::from_utf8(bytes[p + 46..p + 46 + name_len].to_vec()).unwrap();
        out.push((name, u32_at(p + 20), u32_at(p + 24)));
        p += 46 + name_len + extra;
    }
    out
}

fn lib_size() -> Option<u64> {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_drivelink"));
    let lib = exe.parent()?.join("libdrivelink_fmi.so");
    std::fs::metadata(lib).ok().map(|m| m.len())
}

#[test]
fn fmu_of_clutch_lock_holds_description_library_and_netlist() {
    let Some(so_len) = lib_size() else {
        eprintln!("skipped: build the runtime first (cargo build -p drivelink-fmi)");
        return;
    };
    let dir = out_dir("clutch_lock");
    let fmu = dir.join("mech_clutch_lock.fmu");
    let model = root().join("models/netlists/mech_clutch_lock.json");
    let o = drivelink()
        .args([
            "fmu",
            model.to_str().unwrap(),
            "--out",
            fmu.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // FMI 3.0 with both interfaces by default.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("(24 variables, FMI 3.0 Model Exchange and Co-Simulation)"),
        "{stdout}"
    );
    let bytes = std::fs::read(&fmu).unwrap();
    let entries = zip_entries(&bytes);
    let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "modelDescription.xml",
            "binaries/x86_64-linux/drivelink_fmi.so",
            "resources/model.json"
        ]
    );
    assert_eq!(
        u64::from(entries[1].2),
        so_len,
        "the library is copied whole"
    );
    assert!(entries[1].1 < entries[1].2, "the library is deflated");
}

#[test]
fn fmu_model_description_declares_parameters_outputs_and_units() {
    let model = root().join("models/netlists/mech_clutch_lock.json");
    let d = drivelink_netlist::load_file(&model).unwrap();
    let reg = drivelink_blocks::registry();
    let c = drivelink_core::Compiled::new(&d, &reg).unwrap();
    let vars = drivelink_fmi::variables(&d, c.plan()).unwrap();
    let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "time",
            "J1",
            "J2",
            "fn",
            "mu",
            "w0",
            "clutch.mode",
            "clutch.tau",
            "clutch.w_rel",
            "J1.w",
            "J2.w"
        ]
    );
    for (k, v) in vars.iter().enumerate() {
        assert_eq!(v.value_reference as usize, k);
    }
    // "10 N" is 10 in SI with the unit N; "1 kg*m^2" keeps its base units.
    assert_eq!(
        (vars[3].start, vars[3].unit.as_deref()),
        (Some(10.0), Some("N"))
    );
    assert_eq!(
        (vars[1].start, vars[1].unit.as_deref()),
        (Some(1.0), Some("kg*m^2"))
    );
    assert_eq!(vars[4].unit, None);
    let xml = drivelink_fmi::model_description(
        &drivelink_fmi::Description {
            model_name: "m",
            description: "a <b> & \"c\"",
            token: "{t}",
            start_time: 0.0,
            stop_time: 3.0,
            saves_state: true,
        },
        &vars,
    );
    assert!(xml.contains("description=\"a &lt;b&gt; &amp; &quot;c&quot;\""));
    assert!(xml.contains("<Unit name=\"N*m\">\n      <BaseUnit kg=\"1\" m=\"2\" s=\"-2\"/>"));
    assert!(xml.contains(
        "<Float64 name=\"clutch.tau\" valueReference=\"7\" causality=\"output\" variability=\"continuous\" unit=\"N*m\"/>"
    ));
    assert_eq!(xml.matches("<Output ").count(), 5);
}

#[test]
fn fmu_kinds_and_versions_not_written_are_refused() {
    let dir = out_dir("refused");
    let model = root().join("models/netlists/mech_clutch_lock.json");
    let cases: [(&[&str], &str); 3] = [
        (
            &["--kind", "sc", "--fmi", "2"],
            "--kind sc: unknown FMU kind; supported kinds: cs (Co-Simulation), me (Model Exchange), both (the default)",
        ),
        (
            &["--fmi", "4"],
            "--fmi 4: unknown FMI version; supported versions: 3 (FMI 3.0, the default), 2 (FMI 2.0)",
        ),
        (&["--fmi", "1"], "supported versions: 3 (FMI 3.0, the default), 2 (FMI 2.0)"),
    ];
    for (args, says) in cases {
        let fmu = dir.join("x.fmu");
        let o = drivelink()
            .args([
                "fmu",
                model.to_str().unwrap(),
                "--out",
                fmu.to_str().unwrap(),
            ])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains(says));
        assert!(!Path::new(&fmu).exists());
    }
}

#[test]
fn model_exchange_fmu_declares_states_derivatives_and_event_indicators() {
    if lib_size().is_none() {
        eprintln!("skipped: build the runtime first (cargo build -p drivelink-fmi)");
        return;
    }
    let dir = out_dir("me");
    let model = root().join("models/netlists/mech_clutch_lock.json");
    for (kind, label, cs) in [
        ("me", "FMI 3.0 Model Exchange)", false),
        ("both", "FMI 3.0 Model Exchange and Co-Simulation)", true),
    ] {
        let fmu = dir.join(format!("{kind}.fmu"));
        let o = drivelink()
            .args(["fmu", model.to_str().unwrap(), "--kind", kind, "--out"])
            .arg(&fmu)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // time, 5 parameters, 5 outputs, 5 states, 5 derivatives, 3 guards of the clutch.
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(
            stdout.contains(&format!("(24 variables, {label}")),
            "{stdout}"
        );
        let bytes = std::fs::read(&fmu).unwrap();
        let xml = String::from_utf8(zip_read(&bytes, "modelDescription.xml")).unwrap();
        assert!(xml.contains("<ModelExchange modelIdentifier=\"drivelink_fmi\""));
        assert_eq!(xml.contains("<CoSimulation "), cs);
        assert!(xml.contains(
            "<Float64 name=\"speed of the shaft at &apos;J1.flange&apos;\" valueReference=\"13\" causality=\"local\" variability=\"continuous\"/>"
        ), "{xml}");
        assert!(xml.contains(
            "<Float64 name=\"der(speed of the shaft at &apos;J1.flange&apos;)\" valueReference=\"18\" causality=\"local\" variability=\"continuous\" derivative=\"13\"/>"
        ), "{xml}");
        assert!(xml.contains("name=\"guard(clutch.engagement)\" valueReference=\"23\""));
        assert_eq!(xml.matches("<ContinuousStateDerivative ").count(), 5);
        assert_eq!(xml.matches("<EventIndicator ").count(), 3);
        // Outputs, states and derivatives are computed in initialization.
        assert_eq!(xml.matches("<InitialUnknown ").count(), 15);
        // The value references of Co-Simulation's variables do not move.
        assert!(xml.contains("<Float64 name=\"J2.w\" valueReference=\"10\""));
    }
    // FMI 2.0 (both kinds by default): the indicators are counted, not declared; a
    // derivative names its state by index (the 1-based position in ModelVariables).
    let fmu = dir.join("fmi2.fmu");
    let o = drivelink()
        .args(["fmu", model.to_str().unwrap(), "--fmi", "2", "--out"])
        .arg(&fmu)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("(21 variables, FMI 2.0 Model Exchange and Co-Simulation)"),
        "{stdout}"
    );
    let xml = String::from_utf8(zip_read(
        &std::fs::read(&fmu).unwrap(),
        "modelDescription.xml",
    ))
    .unwrap();
    assert!(xml.contains("numberOfEventIndicators=\"3\""));
    assert!(xml.contains("<ModelExchange modelIdentifier=\"drivelink_fmi\""));
    assert!(xml.contains("<CoSimulation modelIdentifier=\"drivelink_fmi\""));
    assert!(!xml.contains("guard("));
    assert!(xml.contains(
        "<ScalarVariable name=\"der(speed of the shaft at &apos;J1.flange&apos;)\" valueReference=\"18\" causality=\"local\" variability=\"continuous\">\n      <Real derivative=\"14\"/>"
    ), "{xml}");
    assert_eq!(xml.matches("<Unknown ").count(), 5 + 5 + 15);
}

/// The bytes of the stored entry `name` of a zip archive, inflated.
fn zip_read(bytes: &[u8], name: &str) -> Vec<u8> {
    let u16_at = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]) as usize;
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap()) as usize;
    let mut p = 0;
    while u32_at(p) == 0x0403_4b50 {
        let (csize, n, extra) = (u32_at(p + 18), u16_at(p + 26), u16_at(p + 28));
        let start = p + 30 + n + extra;
        if &bytes[p + 30..p + 30 + n] == name.as_bytes() {
            let mut out = Vec::new();
            let mut dec = flate2::read::DeflateDecoder::new(&bytes[start..start + csize]);
            std::io::Read::read_to_end(&mut dec, &mut out).unwrap();
            return out;
        }
        p = start + csize;
    }
    panic!("no entry {name}");
}

#[test]
fn fmu_set_value_becomes_the_parameter_start() {
    if lib_size().is_none() {
        eprintln!("skipped: build the runtime first (cargo build -p drivelink-fmi)");
        return;
    }
    let dir = out_dir("set");
    let fmu = dir.join("m.fmu");
    let model = root().join("models/netlists/mech_clutch_lock.json");
    let o = drivelink()
        .args([
            "fmu",
            model.to_str().unwrap(),
            "--out",
            fmu.to_str().unwrap(),
        ])
        .args(["--set", "J2=500 g*m^2"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let bytes = std::fs::read(&fmu).unwrap();
    let xml = String::from_utf8(zip_read(&bytes, "modelDescription.xml")).unwrap();
    assert!(xml.contains(
        "<Float64 name=\"J2\" valueReference=\"2\" causality=\"parameter\" variability=\"tunable\" start=\"0.5\" unit=\"kg*m^2\"/>"
    ), "{xml}");
    let json = zip_read(&bytes, "resources/model.json");
    let token = drivelink_fmi::instantiation_token(&json);
    assert!(xml.contains(&format!("instantiationToken=\"{token}\"")));
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["parameters"]["J2"], "500 g*m^2");
}

#[test]
fn fmi2_fmu_holds_a_2_0_description_and_the_library_under_linux64() {
    let Some(so_len) = lib_size() else {
        eprintln!("skipped: build the runtime first (cargo build -p drivelink-fmi)");
        return;
    };
    let dir = out_dir("fmi2");
    let fmu = dir.join("m.fmu");
    let model = root().join("models/netlists/mech_clutch_lock.json");
    let o = drivelink()
        .args([
            "fmu",
            model.to_str().unwrap(),
            "--fmi",
            "2",
            "--kind",
            "cs",
            "--out",
            fmu.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("(11 variables, FMI 2.0 Co-Simulation)"));
    let bytes = std::fs::read(&fmu).unwrap();
    let entries = zip_entries(&bytes);
    let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "modelDescription.xml",
            "binaries/linux64/drivelink_fmi.so",
            "resources/model.json"
        ]
    );
    assert_eq!(u64::from(entries[1].2), so_len);
    let xml = String::from_utf8(zip_read(&bytes, "modelDescription.xml")).unwrap();
    let json = zip_read(&bytes, "resources/model.json");
    let token = drivelink_fmi::instantiation_token(&json);
    assert!(xml.contains("fmiVersion=\"2.0\""), "{xml}");
    assert!(xml.contains(&format!("guid=\"{token}\"")), "{xml}");
    assert!(xml.contains(
        "<CoSimulation modelIdentifier=\"drivelink_fmi\" canHandleVariableCommunicationStepSize=\"true\""
    ));
    assert!(xml.contains("<Unit name=\"N*m\">\n      <BaseUnit kg=\"1\" m=\"2\" s=\"-2\"/>"));
    assert!(xml.contains(
        "<ScalarVariable name=\"J2\" valueReference=\"2\" causality=\"parameter\" variability=\"tunable\">\n      <Real start=\"2.0\" unit=\"kg*m^2\"/>"
    ), "{xml}");
    assert!(xml.contains(
        "<ScalarVariable name=\"clutch.tau\" valueReference=\"7\" causality=\"output\" variability=\"continuous\">\n      <Real unit=\"N*m\"/>"
    ), "{xml}");
    // The 1-based indices of the five outputs (value references 6..=10) in both lists.
    for i in 7..=11 {
        assert!(xml.contains(&format!("<Unknown index=\"{i}\" dependencies=\"\"/>")));
        assert!(xml.contains(&format!("<Unknown index=\"{i}\"/>")));
    }
    assert_eq!(xml.matches("<Unknown ").count(), 10);
    // The 3.0 names and elements do not leak into the 2.0 description.
    for absent in ["Float64", "instantiationToken", "<Output ", "x86_64-linux"] {
        assert!(!xml.contains(absent), "{absent} in {xml}");
    }
}

#[test]
fn fmu_inport_becomes_an_input_in_both_versions() {
    if lib_size().is_none() {
        eprintln!("skipped: build the runtime first (cargo build -p drivelink-fmi)");
        return;
    }
    let dir = out_dir("inport");
    let net = dir.join("inport.json");
    std::fs::write(
        &net,
        r#"{ "drivelink": 1, "name": "inport",
  "parameters": { "J": "2 kg*m^2" },
  "blocks": [
    { "name": "torque", "type": "Inport", "params": { "value": "1.5 N*m", "unit": "N*m" } },
    { "name": "src", "type": "TorqueSource" },
    { "name": "J1", "type": "Inertia", "params": { "J": "J" } }
  ],
  "connections": [["torque.y", "src.tau"], ["src.flange", "J1.flange"]],
  "log": ["J1.w"] }"#,
    )
    .unwrap();
    let export = |version: &str, kind: &str| {
        let fmu = dir.join(format!("inport{version}{kind}.fmu"));
        let o = drivelink()
            .args([
                "fmu",
                net.to_str().unwrap(),
                "--fmi",
                version,
                "--kind",
                kind,
            ])
            .args(["--out", fmu.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(zip_read(
            &std::fs::read(&fmu).unwrap(),
            "modelDescription.xml",
        ))
        .unwrap()
    };
    // Value references: time, the parameter, the input, then the output.
    let xml = export("3", "cs");
    assert!(xml.contains(
        "<Float64 name=\"torque\" valueReference=\"2\" causality=\"input\" variability=\"continuous\" start=\"1.5\" unit=\"N*m\"/>"
    ), "{xml}");
    assert!(xml.contains("<Float64 name=\"J1.w\" valueReference=\"3\" causality=\"output\""));
    // The output depends on the input: no dependencies attribute ("depends on all").
    assert!(xml.contains("<Output valueReference=\"3\"/>"), "{xml}");
    let xml = export("2", "cs");
    assert!(xml.contains(
        "<ScalarVariable name=\"torque\" valueReference=\"2\" causality=\"input\" variability=\"continuous\">\n      <Real start=\"1.5\" unit=\"N*m\"/>"
    ), "{xml}");
    // No states in Co-Simulation, but an input: FMI 2.0's output depends on all.
    assert!(
        xml.contains("<Outputs>\n      <Unknown index=\"4\"/>"),
        "{xml}"
    );
    assert!(!xml.contains("dependencies"), "{xml}");
    // A unit that is not SI is refused, naming the block and parameter.
    let text = std::fs::read_to_string(&net).unwrap();
    std::fs::write(
        &net,
        text.replace("\"unit\": \"N*m\"", "\"unit\": \"kN*m\""),
    )
    .unwrap();
    let o = drivelink()
        .args(["fmu", net.to_str().unwrap(), "--out"])
        .arg(dir.join("bad.fmu"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("torque") && err.contains("unit") && err.contains("'kN*m' is not an SI unit"),
        "{err}"
    );
}
