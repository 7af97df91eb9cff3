//! Geometry of the block diagrams of every shipped netlist, read back from the SVG: lines
//! are horizontal and vertical runs that never cross a box, boxes never overlap, branches
//! have dots, the power path lies on one row, a car's wheels sit at its corners, common
//! blocks carry their icons and unused optional ports are hidden.

use std::path::PathBuf;

use drivelink_report::diagram::{render, DiagramOptions, Drawing, Links, PortTable};

fn netlists() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../models/netlists");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    out.sort();
    assert!(out.len() >= 30, "the shipped netlists are found");
    out
}

fn draw_file(path: &std::path::Path) -> Drawing {
    let d = drivelink_netlist::load_file(path).unwrap();
    let ports = PortTable::from_registry(&d, &drivelink_blocks::registry());
    let opts = DiagramOptions {
        expand: true,
        links: Links::Anchors,
    };
    render(&d, &ports, &opts).unwrap()
}

fn draw(name: &str) -> Drawing {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../models/netlists")
        .join(name);
    draw_file(&path)
}

/// An attribute value of an SVG element's text.
fn attr(el: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = el.find(&key)? + key.len();
    let end = start + el[start..].find('"')?;
    Some(el[start..end].to_string())
}

fn num(el: &str, name: &str) -> f64 {
    attr(el, name).unwrap().parse().unwrap()
}

/// A box: name, x, y, w, h.
#[derive(Debug, Clone)]
struct Rect {
    name: String,
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

impl Rect {
    fn cx(&self) -> f64 {
        self.x + 0.5 * self.w
    }
    fn cy(&self) -> f64 {
        self.y + 0.5 * self.h
    }
}

/// Every block and terminal box.
fn boxes(svg: &str) -> Vec<Rect> {
    svg.split("<rect")
        .skip(1)
        .map(|r| &r[..r.find('>').unwrap()])
        .filter(|r| r.contains("class=\"block\"") || r.contains("class=\"terminal\""))
        .map(|r| Rect {
            name: attr(r, "data-block").unwrap(),
            x: num(r, "x"),
            y: num(r, "y"),
            w: num(r, "width"),
            h: num(r, "height"),
        })
        .collect()
}

fn find<'a>(boxes: &'a [Rect], name: &str) -> &'a Rect {
    boxes.iter().find(|b| b.name == name).unwrap()
}

/// A line: from block, to block, points.
#[derive(Debug, Clone)]
struct Line {
    net: usize,
    from: String,
    to: String,
    pts: Vec<(f64, f64)>,
}

fn lines(svg: &str) -> Vec<Line> {
    svg.split("<path class=\"line ")
        .skip(1)
        .map(|p| {
            let el = &p[..p.find('>').unwrap()];
            let d = attr(el, "d").unwrap();
            let pts = d
                .split(['M', 'L'])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| {
                    let (x, y) = s.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            Line {
                net: attr(el, "data-net").unwrap().parse().unwrap(),
                from: attr(el, "data-from").unwrap(),
                to: attr(el, "data-to").unwrap(),
                pts,
            }
        })
        .collect()
}

/// Junction dots: (x, y).
fn dots(svg: &str) -> Vec<(f64, f64)> {
    svg.split("<circle class=\"junction\"")
        .skip(1)
        .map(|c| {
            let el = &c[..c.find('>').unwrap()];
            (num(el, "cx"), num(el, "cy"))
        })
        .collect()
}

/// Does the segment `a`-`b` (horizontal or vertical) enter the inside of `r`?
fn crosses(a: (f64, f64), b: (f64, f64), r: &Rect) -> bool {
    let eps = 0.5;
    let (x0, x1) = (a.0.min(b.0), a.0.max(b.0));
    let (y0, y1) = (a.1.min(b.1), a.1.max(b.1));
    x1 > r.x + eps && x0 < r.x + r.w - eps && y1 > r.y + eps && y0 < r.y + r.h - eps
}

fn on_segment(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> bool {
    let eps = 0.11;
    p.0 >= a.0.min(b.0) - eps
        && p.0 <= a.0.max(b.0) + eps
        && p.1 >= a.1.min(b.1) - eps
        && p.1 <= a.1.max(b.1) + eps
}

#[test]
fn lines_run_orthogonally_around_every_box_of_every_shipped_netlist() {
    for path in netlists() {
        let drawing = draw_file(&path);
        for level in &drawing.levels {
            let at = format!("{} / {}", path.display(), level.title);
            let rects = boxes(&level.svg);
            for line in lines(&level.svg) {
                assert!(line.pts.len() >= 2, "{at}: {line:?}");
                for s in line.pts.windows(2) {
                    let (a, b) = (s[0], s[1]);
                    assert!(
                        (a.0 - b.0).abs() < 0.05 || (a.1 - b.1).abs() < 0.05,
                        "{at}: a slanted segment {a:?}-{b:?} of {line:?}"
                    );
                    // Not even its own boxes: a line only touches their edges.
                    for r in &rects {
                        assert!(
                            !crosses(a, b, r),
                            "{at}: the line {} -> {} crosses box {} at {a:?}-{b:?}",
                            line.from,
                            line.to,
                            r.name
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn no_two_boxes_overlap_in_any_shipped_netlist() {
    for path in netlists() {
        let drawing = draw_file(&path);
        for level in &drawing.levels {
            let rects = boxes(&level.svg);
            for (i, a) in rects.iter().enumerate() {
                for b in &rects[i + 1..] {
                    let apart = a.x + a.w <= b.x
                        || b.x + b.w <= a.x
                        || a.y + a.h <= b.y
                        || b.y + b.h <= a.y;
                    assert!(
                        apart,
                        "{} / {}: boxes {a:?} and {b:?} overlap",
                        path.display(),
                        level.title
                    );
                }
            }
        }
    }
}

#[test]
fn every_branching_line_has_a_dot_on_it() {
    for path in netlists() {
        let drawing = draw_file(&path);
        for level in &drawing.levels {
            let all = lines(&level.svg);
            let ds = dots(&level.svg);
            let mut nets: Vec<usize> = all.iter().map(|l| l.net).collect();
            nets.sort_unstable();
            nets.dedup();
            for n in nets {
                let net: Vec<&Line> = all.iter().filter(|l| l.net == n).collect();
                if net.len() < 2 {
                    continue;
                }
                let dotted = ds.iter().any(|&d| {
                    net.iter()
                        .any(|l| l.pts.windows(2).any(|w| on_segment(d, w[0], w[1])))
                });
                assert!(
                    dotted,
                    "{} / {}: the line from {} branches to {} ends without a dot",
                    path.display(),
                    level.title,
                    net[0].from,
                    net.len()
                );
                // The branches of a net hang together: each starts on another of its
                // lines, and they all join up.
                let touches = |a: &Line, b: &Line| {
                    [a.pts[0], a.pts[a.pts.len() - 1]]
                        .iter()
                        .any(|&p| b.pts.windows(2).any(|w| on_segment(p, w[0], w[1])))
                };
                let mut joined = vec![false; net.len()];
                joined[0] = true;
                for _ in 0..net.len() {
                    for i in 0..net.len() {
                        if !joined[i] {
                            joined[i] = (0..net.len()).any(|j| {
                                joined[j] && (touches(net[i], net[j]) || touches(net[j], net[i]))
                            });
                        }
                    }
                }
                assert!(
                    joined.iter().all(|&j| j),
                    "{}: the lines of net {n} fall apart: {net:?}",
                    path.display()
                );
            }
            // And every dot is on some line.
            for d in ds {
                assert!(all
                    .iter()
                    .any(|l| l.pts.windows(2).any(|w| on_segment(d, w[0], w[1]))));
            }
        }
    }
}

#[test]
fn full_car_power_path_runs_straight_along_one_row() {
    let drawing = draw("full_car.json");
    let svg = &drawing.levels[0].svg;
    let rects = boxes(svg);
    let all = lines(svg);
    let chain = ["engine", "converter", "gearbox", "final_drive"];
    for pair in chain.windows(2) {
        let line = all
            .iter()
            .find(|l| l.from == pair[0] && l.to == pair[1])
            .unwrap_or_else(|| panic!("a line {} -> {}", pair[0], pair[1]));
        assert_eq!(line.pts.len(), 2, "{line:?} is one straight run");
        assert_eq!(line.pts[0].1, line.pts[1].1, "{line:?} is horizontal");
        assert!(line.pts[1].0 > line.pts[0].0, "{line:?} runs left to right");
        assert!(find(&rects, pair[1]).x > find(&rects, pair[0]).x + find(&rects, pair[0]).w);
    }
    // The whole chain on one row: the boxes' middles at the line's height.
    let y = all
        .iter()
        .find(|l| l.from == "engine" && l.to == "converter")
        .unwrap()
        .pts[0]
        .1;
    for b in chain {
        let r = find(&rects, b);
        assert!((r.cy() - y).abs() <= 0.5, "{b} {r:?} on the row y = {y}");
    }
}

#[test]
fn a_cars_wheels_sit_at_the_corners_of_its_body() {
    for name in ["vd_full_car.json", "vd_static.json", "vd_turn_open.json"] {
        let drawing = draw(name);
        let rects = boxes(&drawing.levels[0].svg);
        let car = find(&rects, "car");
        let (fl, fr) = (find(&rects, "fl"), find(&rects, "fr"));
        let (rl, rr) = (find(&rects, "rl"), find(&rects, "rr"));
        for left in [fl, rl] {
            assert!(left.x + left.w <= car.x, "{name}: {left:?} left of {car:?}");
        }
        for right in [fr, rr] {
            assert!(
                right.x >= car.x + car.w,
                "{name}: {right:?} right of {car:?}"
            );
        }
        for (front, rear) in [(fl, rl), (fr, rr)] {
            assert!(
                front.cy() < car.cy(),
                "{name}: {front:?} above the body's middle"
            );
            assert!(
                rear.cy() > car.cy(),
                "{name}: {rear:?} below the body's middle"
            );
        }
        assert!(fl.cx() < fr.cx() && rl.cx() < rr.cx());
    }
}

/// The SVG of the `<g class="node">` group of block `name`.
fn node_group<'a>(svg: &'a str, name: &str) -> &'a str {
    svg.split("<g class=\"node\">")
        .find(|g| g.contains(&format!("data-block=\"{name}\"")))
        .map(|g| &g[..g.find("</g>").unwrap()])
        .unwrap_or_else(|| panic!("a box {name}"))
}

#[test]
fn common_blocks_show_their_icon_with_the_name_below() {
    let drawing = draw("full_car.json");
    let svg = &drawing.levels[0].svg;
    let rects = boxes(svg);
    // Sum `master` (signs "+++++"): a circle and one sign per input.
    let master = node_group(svg, "master");
    assert_eq!(master.matches("<circle class=\"icon\"").count(), 1);
    assert_eq!(master.matches(">+</text>").count(), 5);
    // Gain: a closed triangle; clutch: two plates; gear pair: two wheels.
    assert!(node_group(svg, "brake_pedal").contains("<path class=\"icon\" d=\"M"));
    assert_eq!(
        node_group(svg, "lockup")
            .matches("<rect class=\"icon\"")
            .count(),
        2
    );
    assert_eq!(
        node_group(svg, "final_drive")
            .matches("<circle class=\"icon\"")
            .count(),
        2
    );
    // The name is below the box, not inside it.
    for name in ["master", "brake_pedal", "lockup", "final_drive"] {
        let r = find(&rects, name);
        let g = node_group(svg, name);
        let label = g
            .split("<text")
            .find(|t| t.contains(&format!(">{name}</text>")))
            .unwrap();
        assert!(num(label, "y") > r.y + r.h, "{name}: name below the box");
    }
}

#[test]
fn unused_optional_ports_are_hidden() {
    let drawing = draw("full_car.json");
    let svg = &drawing.levels[0].svg;
    // Unconnected heat ports and the brake's support flange are not drawn.
    for (block, port) in [("lockup", "heat"), ("brake", "heat"), ("brake", "support")] {
        assert!(
            !node_group(svg, block).contains(&format!(">{port}</text>")),
            "{block}.{port} hidden"
        );
    }
    // Connected ones are.
    assert!(node_group(svg, "brake").contains(">flange</text>"));
    // An input with a default that nothing drives (a wheel's mu_scale) is hidden too.
    let vd = draw("vd_full_car.json");
    let fl = node_group(&vd.levels[0].svg, "fl");
    assert!(!fl.contains(">mu_scale</text>"));
    assert!(fl.contains(">brake</text>"));
}

/// The overlap (px) of two axis-parallel segments lying on one line, 0 when apart.
fn collinear_overlap(s: (f64, f64), e: (f64, f64), t: (f64, f64), u: (f64, f64)) -> f64 {
    let flat = |a: (f64, f64), b: (f64, f64)| (a.1 - b.1).abs() < 0.05;
    let (lo, hi) = if flat(s, e) && flat(t, u) && (s.1 - t.1).abs() < 0.05 {
        (
            s.0.min(e.0).max(t.0.min(u.0)),
            s.0.max(e.0).min(t.0.max(u.0)),
        )
    } else if !flat(s, e) && !flat(t, u) && (s.0 - t.0).abs() < 0.05 {
        (
            s.1.min(e.1).max(t.1.min(u.1)),
            s.1.max(e.1).min(t.1.max(u.1)),
        )
    } else {
        (0.0, 0.0)
    };
    (hi - lo).max(0.0)
}

#[test]
fn lines_of_different_nets_never_run_on_top_of_each_other() {
    for path in netlists() {
        let drawing = draw_file(&path);
        for level in &drawing.levels {
            let all = lines(&level.svg);
            for (i, a) in all.iter().enumerate() {
                for b in all[i + 1..].iter().filter(|b| b.net != a.net) {
                    for s in a.pts.windows(2) {
                        for t in b.pts.windows(2) {
                            let o = collinear_overlap(s[0], s[1], t[0], t[1]);
                            assert!(
                                o <= 1.0,
                                "{} / {}: {a:?} and {b:?} share {o} px",
                                path.display(),
                                level.title
                            );
                        }
                    }
                }
            }
        }
    }
}
