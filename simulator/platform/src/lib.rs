//! Platform model: what hosts and links exist and which links a message crosses.
//!
//! CONTRACT (owned by the platform helper; the simulator relies on exactly this API):
//!
//! ```ignore
//! pub struct HostId(pub u32);   // index into Platform::hosts()
//! pub struct LinkId(pub u32);   // index into Platform::links()
//! pub enum SharingPolicy { Shared, FatPipe }   // SPLITDUPLEX is expanded into two Shared links <id>_UP/<id>_DOWN
//! pub struct Host { pub name: String, pub speed_flops_per_sec: f64, pub cores: u32, pub props: Vec<(String, String)> }
//! pub struct Link { pub name: String, pub bandwidth_bytes_per_sec: f64, pub latency_secs: f64, pub policy: SharingPolicy }
//! pub struct Route { pub links: Vec<LinkId>, pub latency_secs: f64 }
//! pub struct PlatformOptions { pub loopback_bandwidth_bytes_per_sec: f64 /*10e9*/, pub loopback_latency_secs: f64 /*0*/ }
//! impl Platform {
//!     pub fn from_file(path: &Path, opts: &PlatformOptions) -> Result<Platform, PlatformError>;
//!     pub fn from_xml(text: &str, origin: &str, opts: &PlatformOptions) -> Result<Platform, PlatformError>;
//!     pub fn hosts(&self) -> &[Host];
//!     pub fn links(&self) -> &[Link];
//!     pub fn host_by_name(&self, name: &str) -> Option<HostId>;
//!     pub fn route(&self, src: HostId, dst: HostId) -> Result<Route, PlatformError>;
//!     pub fn notices(&self) -> &[String];
//! }
//! pub mod deployment { pub struct Deployment { pub ranks: Vec<Placement> } pub struct Placement { pub host: HostId, pub args: Vec<String> }
//!     pub fn from_file(path, &Platform) -> Result<Deployment, PlatformError>;
//!     pub fn from_hostfile(path, &Platform, np: Option<usize>) -> Result<Deployment, PlatformError>;
//!     pub fn default_for(&Platform, np: usize) -> Deployment; }
//! ```
