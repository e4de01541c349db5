//! Simulate an application (built-in name or Click file) on a named architecture: the
//! functional run streams its traces into the simulator.
use crate::config::{Mapping, Replication, SimConfig};
use crate::maxrate::{max_rate, MaxRate, MaxRateConfig};
use crate::stats::SimReport;
use pktflow_arch::np::NpArch;
use pktflow_profile::run::{Run, Source};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Which application, traffic, architecture, PE count and replication scope.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AppSpec {
    pub app: String,
    /// A pcap/pcapng file; none = synthetic traffic shaped for the application.
    pub trace: Option<String>,
    /// Synthetic packets (when no trace file).
    pub packets: u64,
    pub traffic_seed: u64,
    pub arch: String,
    /// PEs (default: the architecture's).
    pub pes: Option<u32>,
    pub replication: Replication,
    /// PEs per group for `subset` replication.
    pub subset_size: u32,
}

impl Default for AppSpec {
    fn default() -> Self {
        AppSpec {
            app: "router".into(),
            trace: None,
            packets: 20_000,
            traffic_seed: 1,
            arch: "npire".into(),
            pes: None,
            replication: Replication::Global,
            subset_size: 4,
        }
    }
}

/// Interface tasks: the elements that receive from or transmit to a device.
pub fn is_interface_class(class: &str) -> bool {
    matches!(
        class,
        "FromDevice" | "PollDevice" | "ToDevice" | "FromHost" | "ToHost"
    )
}

/// An application ready to simulate: architecture, PE count, mapping and element names.
pub struct Prepared {
    pub arch: NpArch,
    pub pes: u32,
    pub mapping: Mapping,
    pub names: Vec<String>,
    pub spec: AppSpec,
}

fn out_dir() -> Result<PathBuf, String> {
    let d = std::env::temp_dir().join(format!("pktflow-npsim-{}", std::process::id()));
    std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    Ok(d)
}

impl Prepared {
    pub fn new(spec: &AppSpec) -> Result<Prepared, String> {
        let arch = pktflow_arch::Arch::load(&spec.arch)?;
        let np = arch
            .as_np()
            .ok_or_else(|| {
                format!(
                    "architecture '{}' is not a network processor (try npire or ixp2400)",
                    spec.arch
                )
            })?
            .clone();
        let pes = spec.pes.unwrap_or(np.np.pe_count);
        if pes == 0 {
            return Err("--pes must be at least 1".into());
        }
        let app = pktflow_profile::app::load_app(&spec.app)?;
        let names: Vec<String> = app.graph.elements.iter().map(|e| e.name.clone()).collect();
        let iface: Vec<bool> = app
            .graph
            .elements
            .iter()
            .map(|e| is_interface_class(&e.class))
            .collect();
        let mapping = Mapping::default_for(
            &iface,
            pes,
            np.np.interface_pes,
            spec.replication,
            spec.subset_size,
        )?;
        Ok(Prepared {
            arch: np,
            pes,
            mapping,
            names,
            spec: spec.clone(),
        })
    }

    fn source(&self) -> Source {
        Source::from_args(
            self.spec.trace.as_deref(),
            Some(self.spec.packets),
            self.spec.traffic_seed,
        )
    }

    /// The PE count and mapping a run uses: the prepared ones, or with idealization I every
    /// task on PEs of its own (one each without replication; as many as the prepared machine
    /// has with replication, so no task ever waits for a context).
    pub fn machine(&self, ideal: &crate::Ideal) -> (u32, Mapping) {
        if ideal.infinite_pes {
            let per_task = match self.spec.replication {
                Replication::None => 1,
                _ => self.pes,
            };
            self.mapping.infinite(per_task)
        } else {
            (self.pes, self.mapping.clone())
        }
    }

    /// One simulation, streaming a fresh functional run.
    pub fn simulate(&self, cfg: &SimConfig) -> Result<SimReport, String> {
        let mut run = Run::start(&self.spec.app, &self.source(), &out_dir()?)?;
        let (pes, mapping) = self.machine(&cfg.ideal);
        crate::simulate(&self.arch, pes, &mapping, self.names.clone(), cfg, &mut run)
    }

    /// Bottleneck finding (seed 000 section 5): maximum rates with resources idealized on top
    /// of `cfg.ideal` (normally none).
    pub fn bottleneck(
        &self,
        cfg: &SimConfig,
        m: &MaxRateConfig,
        b: &crate::BottleneckConfig,
        progress: impl FnMut(usize, &str),
    ) -> Result<crate::Bottleneck, String> {
        crate::bottleneck(
            |i| {
                let c = SimConfig {
                    ideal: i.union(&cfg.ideal),
                    ..cfg.clone()
                };
                self.max_rate(&c, m)
            },
            b,
            progress,
        )
    }

    /// Maximum sustainable rate; `cfg.inter_arrival_cycles` is ignored.
    pub fn max_rate(&self, cfg: &SimConfig, m: &MaxRateConfig) -> Result<MaxRate, String> {
        max_rate(
            |ia| {
                let c = SimConfig {
                    inter_arrival_cycles: ia,
                    ..cfg.clone()
                };
                self.simulate(&c)
            },
            m,
        )
    }
}
