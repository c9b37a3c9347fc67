//! What-if platforms (issue 16): the same platform with its host speeds, link bandwidths or
//! link latencies scaled, or with an ideal network or ideal hosts, to ask what bounds a run
//! (Dimemas-style "ideal network" and scaled-parameter replays).
//!
//! [`WhatIf::apply`] returns a new platform: host speeds x `compute`, every link's bandwidth x
//! `bandwidth` and latency x `latency` (the loopback link included). `ideal_network` then sets
//! every latency to 0 and every bandwidth to [`IDEAL_BANDWIDTH`], so that transfers take no
//! time (the replay also drops SMPI's per-message software overheads, see
//! `timeless_replay::ReplayConfig::ideal_network`); `ideal_compute` sets every host speed to
//! [`IDEAL_SPEED`], so that computations take no time.
//!
//! Example: a 1 Gf host computing 1e9 flops takes 1 s; with `compute = 2`, 0.5 s. A 1e6-byte
//! message over one link of 1e8 B/s and 1 ms (SMPI factors set to 1) takes 1 ms + 10 ms =
//! 0.011 s; with `latency = 2, bandwidth = 0.5`, 2 ms + 20 ms = 0.022 s.

use crate::Platform;

/// Bandwidth of an ideal link, B/s: a 1 TB message crosses it in 1e-18 s.
pub const IDEAL_BANDWIDTH: f64 = 1e30;
/// Speed of an ideal host, flop/s.
pub const IDEAL_SPEED: f64 = 1e30;

/// Changes to a platform. The default changes nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WhatIf {
    /// Host speed factor (`--scale-compute`).
    pub compute: f64,
    /// Link bandwidth factor (`--scale-bandwidth`).
    pub bandwidth: f64,
    /// Link latency factor (`--scale-latency`).
    pub latency: f64,
    /// Zero latency, unlimited bandwidth (`--ideal-network`).
    pub ideal_network: bool,
    /// Hosts of unlimited speed (`--ideal-compute`).
    pub ideal_compute: bool,
}

impl Default for WhatIf {
    fn default() -> Self {
        WhatIf {
            compute: 1.0,
            bandwidth: 1.0,
            latency: 1.0,
            ideal_network: false,
            ideal_compute: false,
        }
    }
}

/// A factor that is not a positive finite number.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{what} must be a positive finite factor, not {value}")]
pub struct WhatIfError {
    /// Which knob.
    pub what: &'static str,
    /// Its value.
    pub value: f64,
}

impl WhatIf {
    /// Whether anything changes.
    pub fn is_identity(&self) -> bool {
        *self == WhatIf::default()
    }

    /// Checks the factors.
    ///
    /// # Errors
    /// [`WhatIfError`] for a factor that is zero, negative, infinite or NaN.
    pub fn validate(&self) -> Result<(), WhatIfError> {
        for (what, value) in [
            ("--scale-compute", self.compute),
            ("--scale-bandwidth", self.bandwidth),
            ("--scale-latency", self.latency),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(WhatIfError { what, value });
            }
        }
        Ok(())
    }

    /// One line per change, for reports (`host speeds x 2`, `ideal network: ...`).
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.compute != 1.0 {
            out.push(format!("host speeds x {}", self.compute));
        }
        if self.bandwidth != 1.0 {
            out.push(format!("link bandwidths x {}", self.bandwidth));
        }
        if self.latency != 1.0 {
            out.push(format!("link latencies x {}", self.latency));
        }
        if self.ideal_network {
            out.push(
                "ideal network: latencies 0, bandwidths unlimited, no per-message software \
                 overheads (smpi/os, or, ois)"
                    .into(),
            );
        }
        if self.ideal_compute {
            out.push("ideal compute: host speeds unlimited".into());
        }
        out
    }

    /// The platform with the changes applied.
    pub fn apply(&self, mut p: Platform) -> Platform {
        for h in &mut p.hosts {
            h.speed_flops_per_sec = if self.ideal_compute {
                IDEAL_SPEED
            } else {
                h.speed_flops_per_sec * self.compute
            };
        }
        for l in &mut p.links {
            if self.ideal_network {
                l.bandwidth_bytes_per_sec = IDEAL_BANDWIDTH;
                l.latency_secs = 0.0;
            } else {
                l.bandwidth_bytes_per_sec *= self.bandwidth;
                l.latency_secs *= self.latency;
            }
        }
        p
    }
}
