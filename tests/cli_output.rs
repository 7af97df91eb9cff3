//! What the command line prints: a closed output pipe, the catalogue's variables,
//! suggestions, notes and messages a new user meets.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

mod common;
use common::temp_dir;

fn drivelink() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drivelink"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn netlist(name: &str) -> PathBuf {
    root().join("models/netlists").join(name)
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Run `cmd` with standard output on a pipe whose reading end is already closed (as in
/// `drivelink blocks | head -1` once `head` has exited): every write gets EPIPE.
fn with_closed_stdout(mut cmd: Command) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    cmd.stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("run drivelink")
}

#[test]
fn closed_stdout_pipe_ends_every_command_quietly() {
    let dir = temp_dir("pipe");
    let out_dir = dir.join("run");
    let csv = out_dir.join("results.csv");
    let cases: Vec<(Vec<String>, u8)> = vec![
        (vec!["blocks".into()], 0),
        (vec!["blocks".into(), "--markdown".into()], 0),
        (vec!["blocks".into(), "Clutch".into()], 0),
        (vec!["schema".into()], 0),
        (vec!["--help".into()], 0),
        (vec!["--version".into()], 0),
        (
            vec![
                "validate".into(),
                netlist("mech_clutch_lock.json").display().to_string(),
            ],
            0,
        ),
        (
            vec![
                "run".into(),
                netlist("mech_clutch_lock.json").display().to_string(),
                "--no-plots".into(),
                "--out".into(),
                out_dir.display().to_string(),
            ],
            0,
        ),
    ];
    for (args, code) in cases {
        let mut cmd = drivelink();
        cmd.args(&args);
        let o = with_closed_stdout(cmd);
        let (_, stderr) = text(&o);
        assert_eq!(o.status.code(), Some(i32::from(code)), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?} printed on stderr: {stderr}");
    }
    // the run still wrote its results although nobody read its console line
    assert!(csv.is_file());
    // and plot, which prints "wrote ..."
    let mut cmd = drivelink();
    cmd.arg("plot")
        .arg(&csv)
        .args(["--signals", "clutch.mode", "--out"])
        .arg(dir.join("mode.png"));
    let o = with_closed_stdout(cmd);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert!(text(&o).1.is_empty(), "{}", text(&o).1);
    assert!(dir.join("mode.png").is_file());
}

#[test]
fn blocks_type_lists_loggable_variables_with_kernel_units() {
    let o = drivelink().args(["blocks", "Clutch"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let s = text(&o).0;
    let section = s
        .split("variables, logged as NAME.VAR:\n")
        .nth(1)
        .unwrap_or_else(|| panic!("no variables section:\n{s}"));
    let rows: Vec<Vec<&str>> = section
        .lines()
        .map(|l| l.split_whitespace().take(2).collect())
        .collect();
    assert_eq!(
        rows,
        [
            ["w_rel", "rad/s"],
            ["phi_rel", "rad"],
            ["tau", "N*m"],
            ["mode", "1"],
            ["power_loss", "W"]
        ]
    );
    // signal outputs are loggable too
    let o = drivelink()
        .args(["blocks", "TorqueSensor"])
        .output()
        .unwrap();
    assert!(text(&o).0.contains("      tau"), "{}", text(&o).0);
    // the Tire's slip joint is translational: its mode is listed, its speed w is rad/s
    let o = drivelink().args(["blocks", "Tire"]).output().unwrap();
    let tire = text(&o).0;
    assert!(
        tire.lines()
            .any(|l| l.split_whitespace().take(2).eq(["w", "rad/s"])),
        "{tire}"
    );
}

#[test]
fn unknown_block_type_friction_clutch_suggests_clutch() {
    let o = drivelink()
        .args(["blocks", "FrictionClutch"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let (stdout, stderr) = text(&o);
    assert!(stdout.is_empty());
    assert!(
        stderr.starts_with(
            "error: unknown block type 'FrictionClutch' (did you mean 'Clutch'?); known types: "
        ),
        "{stderr}"
    );
}

#[test]
fn set_unknown_parameter_suggests_by_word_part() {
    let o = drivelink()
        .arg("validate")
        .arg(netlist("full_car.json"))
        .args(["--set", "wheel_radius=0.35", "--set", "clutch_rise=0.5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o).1;
    // word parts in another order and case: radiusWheel
    assert!(
        e.contains("unknown parameter 'wheel_radius' (did you mean 'radiusWheel'?)"),
        "{e}"
    );
    // a typo still goes through the edit distance
    assert!(
        e.contains("unknown parameter 'clutch_rise' (did you mean 'clutchRise'?)"),
        "{e}"
    );
}

#[test]
fn set_bare_number_over_a_value_with_unit_notes_that_it_is_si() {
    let o = drivelink()
        .arg("validate")
        .arg(netlist("signal_first_order.json"))
        .args(["--set", "t0=0.5", "--set", "tau=0.25"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stdout.starts_with("ok: signal_first_order"), "{stdout}");
    // t0 was "0.2 s": one note; tau was a bare number already: none
    assert_eq!(
        stderr,
        "note: --set t0=0.5: a bare number is taken in SI units (s); the netlist gives \"0.2 s\"; give a unit as in --set \"t0=0.5 <unit>\"\n"
    );
}

#[test]
fn missing_model_file_points_at_the_shipped_netlist() {
    let o = drivelink()
        .current_dir(root())
        .args(["validate", "full_car.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o).1;
    assert!(e.contains("full_car.json"), "{e}");
    assert!(
        e.contains("did you mean models/netlists/full_car.json?"),
        "{e}"
    );
    // a name that is not shipped gets no such hint
    let o = drivelink()
        .current_dir(root())
        .args(["validate", "no_such_model.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!text(&o).1.contains("did you mean"), "{}", text(&o).1);
}

#[test]
fn run_that_cannot_write_its_outputs_does_not_claim_a_destination() {
    let dir = temp_dir("unwritable");
    let file = dir.join("a_file");
    std::fs::write(&file, "not a directory").unwrap();
    let o = drivelink()
        .arg("run")
        .arg(netlist("mech_clutch_lock.json"))
        .arg("--out")
        .arg(file.join("sub"))
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("error: cannot create output directory"),
        "{stderr}"
    );
    assert!(stdout.contains("results not written"), "{stdout}");
    assert!(!stdout.contains("->"), "{stdout}");
}

/// The pictures and the report are drawn side by side: a picture that cannot be written
/// fails the run (exit 1, the file named) but leaves the tables and the report written,
/// and the run's line names the directory they are in.
#[test]
fn a_picture_that_cannot_be_written_leaves_the_report_and_tables_written() {
    let dir = temp_dir("picture_blocked");
    // A directory where the first scope's picture goes: the picture cannot be written.
    std::fs::create_dir_all(dir.join("speeds.png")).unwrap();
    let o = drivelink()
        .arg("run")
        .arg(netlist("mech_clutch_lock.json"))
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error: scope `speeds`: writing") && stderr.contains("speeds.png"),
        "{stderr}"
    );
    for f in ["results.csv", "events.csv", "summary.json", "report.html"] {
        assert!(dir.join(f).is_file(), "{f} missing; {stderr}");
    }
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(report.trim_end().ends_with("</html>"), "report cut short");
    assert!(
        stdout.contains(&format!("-> {}", dir.display())),
        "{stdout}"
    );
}

#[test]
fn plot_to_a_jpg_name_is_refused_instead_of_writing_png_bytes() {
    let dir = temp_dir("plot_ext");
    let csv = dir.join("results.csv");
    std::fs::write(&csv, "time,x.y\n0,1\n1,2\n").unwrap();
    for name in ["plot.jpg", "plot"] {
        let o = drivelink()
            .arg("plot")
            .arg(&csv)
            .args(["--signals", "x.y", "--out"])
            .arg(dir.join(name))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{name}");
        let e = text(&o).1;
        assert!(
            e.contains("expected an image file name ending in .png or .svg"),
            "{e}"
        );
        assert!(!dir.join(name).exists(), "{name} was written");
    }
    let o = drivelink()
        .arg("plot")
        .arg(&csv)
        .args(["--signals", "x.y", "--out"])
        .arg(dir.join("plot.PNG"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert_eq!(
        &std::fs::read(dir.join("plot.PNG")).unwrap()[..4],
        b"\x89PNG"
    );
}

#[test]
fn bad_set_value_is_reported_as_coming_from_set() {
    let o = drivelink()
        .arg("validate")
        .arg(netlist("full_car.json"))
        .args(["--set", "throttle=abc+1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o).1;
    assert!(
        e.contains("full_car.json: parameters.throttle (from --set throttle=abc+1): \"abc+1\""),
        "{e}"
    );
    // A plain word is a text (choice) parameter; used for a number it is named as such.
    let o = drivelink()
        .arg("validate")
        .arg(netlist("full_car.json"))
        .args(["--set", "throttle=abc"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o).1;
    assert!(
        e.contains("'throttle' is a text parameter (\"abc\"); expected a number"),
        "{e}"
    );
}

/// Regression: a text parameter used inside an expression was an "unknown identifier"
/// whose "did you mean" hint was its own name (`'clutchRise' (did you mean
/// 'clutchRise'?)`); it is now named as a text parameter.
#[test]
fn text_parameter_inside_an_expression_is_named_not_suggested_as_itself() {
    let o = drivelink()
        .arg("validate")
        .arg(netlist("full_car.json"))
        .args(["--set", "clutchRise=slow"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o).1;
    assert!(
        e.contains("'clutchRise' is a text parameter (\"slow\"), not a number"),
        "{e}"
    );
    assert!(!e.contains("did you mean 'clutchRise'"), "{e}");
}

#[test]
fn plot_overlays_several_runs_on_an_xy_picture_and_needs_x_for_it() {
    let dir = temp_dir("plot_xy");
    for (run, r) in [("a", 1.0), ("b", 2.0)] {
        std::fs::create_dir_all(dir.join(run)).unwrap();
        // A circle of radius r: x = r·sin(t), y = r·(1 − cos(t)).
        let mut csv = String::from("time,car.x,car.y\n");
        for k in 0..64 {
            let t = k as f64 * 0.1;
            csv += &format!("{t},{},{}\n", r * t.sin(), r * (1.0 - t.cos()));
        }
        std::fs::write(dir.join(run).join("results.csv"), csv).unwrap();
    }
    let csvs = [dir.join("a/results.csv"), dir.join("b/results.csv")];
    let o = drivelink()
        .arg("plot")
        .args(&csvs)
        .args(["--signals", "car.y", "--out"])
        .arg(dir.join("t.png"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("--x SIGNAL"), "{}", text(&o).1);
    // Regression: `--x time` said "no column 'time'" although the files' first column is
    // `time`; it now overlays the runs against time (and plots one file as without --x).
    for (files, name) in [(&csvs[..], "vs_time.png"), (&csvs[..1], "one_time.png")] {
        let o = drivelink()
            .arg("plot")
            .args(files)
            .args(["--x", "time", "--signals", "car.y", "--out"])
            .arg(dir.join(name))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
        assert_eq!(&std::fs::read(dir.join(name)).unwrap()[..4], b"\x89PNG");
    }
    let o = drivelink()
        .arg("plot")
        .args(&csvs)
        .args(["--x", "car.x", "--signals", "car.y", "--out"])
        .arg(dir.join("xy.png"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    assert_eq!(&std::fs::read(dir.join("xy.png")).unwrap()[..4], b"\x89PNG");
    let o = drivelink()
        .arg("plot")
        .args(&csvs)
        .args(["--x", "car.z", "--signals", "car.y", "--out"])
        .arg(dir.join("bad.png"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("no column 'car.z'"), "{}", text(&o).1);
}

/// `--timeout` takes a time with a unit as `--stop-time` does ("1 min" was refused as an
/// invalid float); a unit that is not a time is named.
#[test]
fn timeout_takes_a_time_with_a_unit() {
    let dir = temp_dir("timeout_unit");
    let o = drivelink()
        .arg("run")
        .arg(netlist("mech_breakaway.json"))
        .args(["--timeout", "1 min", "--no-plots", "--no-report", "--out"])
        .arg(dir.join("ok"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
    let o = drivelink()
        .arg("run")
        .arg(netlist("mech_breakaway.json"))
        .args(["--timeout", "3 N", "--out"])
        .arg(dir.join("bad"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("--timeout 3 N: expected s but got N"),
        "{}",
        text(&o).1
    );
}

/// `drivelink plot` of a results file with its summary.json: the title says what is
/// plotted (it was the output file's name), each signal shows in its recorded unit with
/// two units on the left and right axes, and an XY plot's `--xlim` limits the x signal and
/// fits y to what is in that window (it kept the y range of the whole run).
#[test]
fn plot_titles_from_signals_puts_two_units_on_two_axes_and_refits_an_xy_window() {
    let dir = temp_dir("plot_units");
    let run = dir.join("turn");
    std::fs::create_dir_all(&run).unwrap();
    // A quarter circle of radius 100 m at 10 m/s: x = 100·sin(t/10), y = 100·(1 − cos(t/10)).
    let mut csv = String::from("time,car.x,car.y,car.speed,car.r\n");
    for k in 0..=157 {
        let t = k as f64 * 0.1;
        let a = t / 10.0;
        csv += &format!(
            "{t},{},{},10,0.1\n",
            100.0 * a.sin(),
            100.0 * (1.0 - a.cos())
        );
    }
    std::fs::write(run.join("results.csv"), csv).unwrap();
    let units = r#"{"units": {"car.x": "m", "car.y": "m", "car.speed": "m/s", "car.r": "rad/s"}}"#;
    std::fs::write(run.join("summary.json"), units).unwrap();
    let svg = |args: &[&str], name: &str| -> String {
        let o = drivelink()
            .arg("plot")
            .arg(run.join("results.csv"))
            .args(args)
            .arg("--out")
            .arg(dir.join(name))
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o).1);
        std::fs::read_to_string(dir.join(name)).unwrap()
    };
    let two = svg(&["--signals", "car.speed,car.r"], "two.svg");
    assert!(two.contains("car.speed, car.r"), "title from the signals");
    assert!(!two.contains(">two<"), "not the file name as title");
    assert!(two.contains("car.speed [m/s]") && two.contains("car.r [rad/s]"));
    // The window x in [0, 20] m holds y up to 100·(1 − cos(asin(0.2))) = 2.02 m: the y
    // axis is fitted to that (equal scaling makes it span about as many metres as fit the
    // plot's height at the x scale), not to the whole run's 100 m.
    let xy = svg(
        &["--x", "car.x", "--signals", "car.y", "--xlim", "0,20"],
        "xy.svg",
    );
    assert!(xy.contains("car.y vs car.x"), "XY title");
    assert!(xy.contains("car.x [m]"), "x axis with its unit");
    assert!(
        !xy.contains(">100<") && !xy.contains(">80<"),
        "y still spans the whole run"
    );
}

/// `drivelink report A B` compares two runs as Simulink's Data Inspector does: each common
/// signal overlaid with its difference, in one offline report, and the largest
/// differences printed. Two analytic runs: y = t and y = t + 0.5·t² on the same grid, so
/// the largest difference is 0.5·T² at the end, and a signal equal in both differs by 0.
#[test]
fn report_of_two_runs_overlays_them_and_prints_the_largest_difference() {
    let dir = temp_dir("report_ab");
    for (run, k) in [("a", 0.0), ("b", 0.5)] {
        std::fs::create_dir_all(dir.join(run)).unwrap();
        let mut csv = String::from("time,x.y,x.c\n");
        for i in 0..=100 {
            let t = i as f64 * 0.02;
            csv += &format!("{t},{},{}\n", t + k * t * t, 3.0);
        }
        std::fs::write(dir.join(run).join("results.csv"), csv).unwrap();
        std::fs::write(
            dir.join(run).join("summary.json"),
            r#"{"units": {"x.y": "m", "x.c": "m"}}"#,
        )
        .unwrap();
    }
    let html = dir.join("cmp.html");
    let o = drivelink()
        .arg("report")
        .arg(dir.join("a"))
        .arg(dir.join("b").join("results.csv"))
        .arg("--out")
        .arg(&html)
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let row = |n: &str| out.lines().find(|l| l.starts_with(n)).unwrap().to_string();
    // 0.5·2² = 2 m at t = 2 s, the whole range of A (0..2 m).
    assert!(row("x.y").contains("2.000000e0 m"), "{out}");
    assert!(row("x.y").contains("2.000000"), "{out}");
    assert!(row("x.c").contains("0.000000e0 m"), "{out}");
    let page = std::fs::read_to_string(&html).unwrap();
    // One chart per signal (titled with it), each with A, B and the difference B − A.
    assert_eq!(
        page.matches("\"name\":\"B − A\"").count(),
        2,
        "two difference traces"
    );
    assert!(
        page.contains(">x.y<") && page.contains(">x.c<"),
        "a chart per signal"
    );
    // A signal only one run logged is named.
    let o = drivelink()
        .arg("report")
        .arg(dir.join("a"))
        .arg(dir.join("b"))
        .args(["--signals", "x.y,x.z", "--out"])
        .arg(dir.join("bad.html"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).1.contains("'x.z' not logged by both runs"),
        "{}",
        text(&o).1
    );
}
