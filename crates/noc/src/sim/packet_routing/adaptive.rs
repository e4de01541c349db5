//! `adaptive`: minimal adaptive routing with escape channels (Duato): VCs 1..V-1 on any
//! minimal direction, VC 0 in the XY direction when no adaptive VC can take the packet.
use super::{minimal_dirs, xy_dir, Route, RoutingFunction};
use crate::routing::{Mesh, LOCAL};

pub struct MinAdaptive;

impl RoutingFunction for MinAdaptive {
    fn name(&self) -> &'static str {
        "adaptive"
    }
    fn describe(&self) -> &'static str {
        "minimal adaptive: VCs 1..V-1 on any minimal direction (X first on ties), VC 0 (escape) in the XY direction"
    }
    fn min_vcs(&self) -> usize {
        2
    }
    fn inject_reserve(&self) -> bool {
        true
    }
    #[inline]
    fn route(&self, _mesh: &Mesh, cur: (u16, u16), dst: (u16, u16)) -> Route {
        let e = xy_dir(cur, dst);
        if e == LOCAL as u8 {
            return Route::eject();
        }
        let (ports, nports) = minimal_dirs(cur, dst);
        Route {
            ports,
            nports,
            escape: e,
        }
    }
}
