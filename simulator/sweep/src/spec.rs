//! The study file: traces, fixed inputs and the axes to vary.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::SweepError;

/// What an axis changes in a replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AxisKind {
    /// A SimGrid `--cfg` item: the axis name is the key (`smpi/bw-factor`,
    /// `smpi/bcast`), each value is passed as `KEY:VALUE`.
    Cfg,
    /// `scale-compute`: the host speed factor.
    ScaleCompute,
    /// `scale-bandwidth`: the link bandwidth factor.
    ScaleBandwidth,
    /// `scale-latency`: the link latency factor.
    ScaleLatency,
    /// `ideal-network`: `true` or `false`.
    IdealNetwork,
    /// `ideal-compute`: `true` or `false`.
    IdealCompute,
    /// `platform`: platform files (relative to the spec file).
    Platform,
    /// `hostfile`: hostfiles (relative to the spec file); replaces the spec's deployment.
    Hostfile,
    /// `deployment`: deployment files (relative to the spec file).
    Deployment,
    /// `np`: number of ranks.
    Np,
}

impl AxisKind {
    /// The kind of the axis named `name`, `None` for a name that is neither a knob nor a
    /// `--cfg` key (which always contains a `/`).
    pub fn of(name: &str) -> Option<AxisKind> {
        Some(match name {
            "scale-compute" => AxisKind::ScaleCompute,
            "scale-bandwidth" => AxisKind::ScaleBandwidth,
            "scale-latency" => AxisKind::ScaleLatency,
            "ideal-network" => AxisKind::IdealNetwork,
            "ideal-compute" => AxisKind::IdealCompute,
            "platform" => AxisKind::Platform,
            "hostfile" => AxisKind::Hostfile,
            "deployment" => AxisKind::Deployment,
            "np" => AxisKind::Np,
            n if n.contains('/') && !n.contains(':') && !n.trim().is_empty() => AxisKind::Cfg,
            _ => return None,
        })
    }

    /// Whether a value is acceptable; the reason if not.
    fn check(self, value: &str) -> Result<(), String> {
        match self {
            AxisKind::ScaleCompute | AxisKind::ScaleBandwidth | AxisKind::ScaleLatency => {
                match value.parse::<f64>() {
                    Ok(x) if x.is_finite() && x > 0.0 => Ok(()),
                    _ => Err(format!("`{value}` is not a positive finite factor")),
                }
            }
            AxisKind::IdealNetwork | AxisKind::IdealCompute => match value {
                "true" | "false" => Ok(()),
                _ => Err(format!("`{value}` is not true or false")),
            },
            AxisKind::Np => match value.parse::<usize>() {
                Ok(n) if n > 0 => Ok(()),
                _ => Err(format!("`{value}` is not a positive number of ranks")),
            },
            AxisKind::Cfg | AxisKind::Platform | AxisKind::Hostfile | AxisKind::Deployment => {
                if value.is_empty() {
                    Err("empty value".into())
                } else {
                    Ok(())
                }
            }
        }
    }
}

/// One axis of the study.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Its name as written (`scale-bandwidth`, `smpi/bcast`).
    pub name: String,
    /// What it changes.
    pub kind: AxisKind,
    /// Its values as text (numbers as TOML wrote them: `0.5`, `2`), in file order. Empty for an
    /// axis only named by `[[point]]` tables.
    pub values: Vec<String>,
}

/// One trace of the study.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// As written in the spec file (the `trace` column of the results).
    pub label: String,
    /// Resolved against the spec file's directory.
    pub path: PathBuf,
}

/// How the points are formed.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// Every combination of the axes' values (the default, `mode = "product"`).
    Product,
    /// The `[[point]]` tables (`mode = "points"`): one value per axis, in axis order; `None`
    /// where a point leaves an axis at the spec's fixed input.
    Points(Vec<Vec<Option<String>>>),
}

/// A parsed study file. Paths are resolved against the spec file's directory.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Spec {
    /// The spec file.
    pub file: PathBuf,
    /// Its directory (paths in axis values are resolved against it).
    pub dir: PathBuf,
    /// Platform file (unless a `platform` axis sets it).
    pub platform: Option<PathBuf>,
    /// Deployment file.
    pub deployment: Option<PathBuf>,
    /// Hostfile.
    pub hostfile: Option<PathBuf>,
    /// Number of ranks.
    pub np: Option<usize>,
    /// `--cfg` items applied to every point before the axes' ones.
    pub cfg: Vec<String>,
    /// A `--cfg-file`.
    pub cfg_file: Option<PathBuf>,
    /// Tracer-overhead compensation (default on, as `timeless simulate`).
    pub compensation: bool,
    /// The traces.
    pub traces: Vec<Trace>,
    /// The axes, in file order.
    pub axes: Vec<Axis>,
    /// Product or explicit points.
    pub mode: Mode,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    platform: Option<String>,
    deployment: Option<String>,
    hostfile: Option<String>,
    np: Option<usize>,
    #[serde(default)]
    cfg: Vec<String>,
    cfg_file: Option<String>,
    compensation: Option<bool>,
    traces: Vec<String>,
    mode: Option<String>,
    #[serde(default)]
    axis: Vec<RawAxis>,
    #[serde(default)]
    point: Vec<toml::Table>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAxis {
    name: String,
    #[serde(default)]
    values: Vec<toml::Value>,
}

/// A TOML value as axis text: strings as they are, numbers and booleans as TOML prints them
/// (`0.5`, `2`, `1e-6`), integral floats without a fraction (`1.0` → `1`).
fn value_text(v: &toml::Value) -> Option<String> {
    Some(match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => format!("{f}"),
        toml::Value::Boolean(b) => b.to_string(),
        _ => return None,
    })
}

impl Spec {
    /// Reads and checks a study file.
    ///
    /// # Errors
    /// [`SweepError::Read`] when the file cannot be read, [`SweepError::Spec`] (naming the file
    /// and the bad key) when it is not a valid study.
    pub fn from_file(file: &Path) -> Result<Spec, SweepError> {
        let text = std::fs::read_to_string(file).map_err(|source| SweepError::Read {
            path: file.to_path_buf(),
            source,
        })?;
        Spec::parse(&text, file)
    }

    /// Parses a study file's text; `file` names it in errors and its directory resolves the
    /// relative paths.
    ///
    /// # Errors
    /// [`SweepError::Spec`] naming the file and the bad key.
    pub fn parse(text: &str, file: &Path) -> Result<Spec, SweepError> {
        let bad = |key: &str, message: String| SweepError::Spec {
            file: file.to_path_buf(),
            key: key.to_string(),
            message,
        };
        let raw: RawSpec = toml::from_str(text).map_err(|e| {
            let msg = e.message().to_string();
            // serde names the unknown or missing field in its message.
            let key = msg
                .split('`')
                .nth(1)
                .map(str::to_string)
                .unwrap_or_else(|| "(syntax)".into());
            SweepError::Spec {
                file: file.to_path_buf(),
                key,
                message: e.to_string().trim().to_string(),
            }
        })?;
        let dir = file
            .parent()
            .map(Path::to_path_buf)
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or_else(|| PathBuf::from("."));
        let path = |p: &String| dir.join(p);
        if raw.traces.is_empty() {
            return Err(bad("traces", "lists no trace".into()));
        }
        let mut seen = HashSet::new();
        for t in &raw.traces {
            if !seen.insert(t) {
                return Err(bad("traces", format!("lists `{t}` twice")));
            }
        }
        let mut axes = Vec::new();
        let mut names = HashSet::new();
        for (i, a) in raw.axis.iter().enumerate() {
            let key = format!("axis[{i}].name");
            let kind = AxisKind::of(&a.name).ok_or_else(|| {
                bad(
                    &key,
                    format!(
                        "`{}` is neither a --cfg key (KEY/with/slash) nor one of scale-compute, \
                         scale-bandwidth, scale-latency, ideal-network, ideal-compute, platform, \
                         hostfile, deployment, np",
                        a.name
                    ),
                )
            })?;
            if !names.insert(a.name.clone()) {
                return Err(bad(&key, format!("axis `{}` appears twice", a.name)));
            }
            let vkey = format!("axis[{i}].values ({})", a.name);
            let mut values = Vec::new();
            for v in &a.values {
                let t = value_text(v)
                    .ok_or_else(|| bad(&vkey, format!("{v} is not a string, number or boolean")))?;
                kind.check(&t).map_err(|m| bad(&vkey, m))?;
                if values.contains(&t) {
                    return Err(bad(&vkey, format!("value `{t}` appears twice")));
                }
                values.push(t);
            }
            axes.push(Axis {
                name: a.name.clone(),
                kind,
                values,
            });
        }
        let mode = match raw.mode.as_deref() {
            None if raw.point.is_empty() => Mode::Product,
            Some("product") => Mode::Product,
            None | Some("points") => {
                if raw.point.is_empty() {
                    return Err(bad(
                        "mode",
                        "is \"points\" but there is no [[point]]".into(),
                    ));
                }
                // Axes named only by points join the list, in order of appearance.
                for (i, p) in raw.point.iter().enumerate() {
                    for name in p.keys() {
                        if names.contains(name) {
                            continue;
                        }
                        let kind = AxisKind::of(name).ok_or_else(|| {
                            bad(
                                &format!("point[{i}].{name}"),
                                "is neither a --cfg key nor a what-if knob".into(),
                            )
                        })?;
                        names.insert(name.clone());
                        axes.push(Axis {
                            name: name.clone(),
                            kind,
                            values: Vec::new(),
                        });
                    }
                }
                let mut points = Vec::new();
                let mut keys = HashSet::new();
                for (i, p) in raw.point.iter().enumerate() {
                    let mut row = Vec::new();
                    for a in &axes {
                        let key = format!("point[{i}].{}", a.name);
                        let v = match p.get(&a.name) {
                            None => None,
                            Some(v) => {
                                let t = value_text(v).ok_or_else(|| {
                                    bad(&key, format!("{v} is not a string, number or boolean"))
                                })?;
                                a.kind.check(&t).map_err(|m| bad(&key, m))?;
                                Some(t)
                            }
                        };
                        row.push(v);
                    }
                    if !keys.insert(row.clone()) {
                        return Err(bad(
                            &format!("point[{i}]"),
                            "repeats an earlier point".into(),
                        ));
                    }
                    points.push(row);
                }
                Mode::Points(points)
            }
            Some(other) => {
                return Err(bad(
                    "mode",
                    format!("`{other}` is neither \"product\" nor \"points\""),
                ))
            }
        };
        if mode == Mode::Product {
            if !raw.point.is_empty() {
                return Err(bad(
                    "point",
                    "[[point]] tables need mode = \"points\"".into(),
                ));
            }
            for (i, a) in axes.iter().enumerate() {
                if a.values.is_empty() {
                    return Err(bad(
                        &format!("axis[{i}].values ({})", a.name),
                        "is empty".into(),
                    ));
                }
            }
        }
        let has_platform_axis = axes.iter().any(|a| a.kind == AxisKind::Platform);
        if raw.platform.is_none() && !has_platform_axis {
            return Err(bad("platform", "missing (and no `platform` axis)".into()));
        }
        for item in &raw.cfg {
            if !item.contains(':') {
                return Err(bad("cfg", format!("`{item}` is not KEY:VALUE")));
            }
        }
        Ok(Spec {
            file: file.to_path_buf(),
            platform: raw.platform.as_ref().map(path),
            deployment: raw.deployment.as_ref().map(path),
            hostfile: raw.hostfile.as_ref().map(path),
            np: raw.np,
            cfg: raw.cfg,
            cfg_file: raw.cfg_file.as_ref().map(path),
            compensation: raw.compensation.unwrap_or(true),
            traces: raw
                .traces
                .iter()
                .map(|t| Trace {
                    label: t.clone(),
                    path: path(t),
                })
                .collect(),
            axes,
            mode,
            dir,
        })
    }
}
