//! `dor`: XY dimension-order routing (X first, then Y), any VC.
use super::{xy_dir, Route, RoutingFunction, NO_PORT};
use crate::routing::{Mesh, LOCAL};

pub struct Dor;

impl RoutingFunction for Dor {
    fn name(&self) -> &'static str {
        "dor"
    }
    fn describe(&self) -> &'static str {
        "XY dimension-order routing: X first, then Y; any virtual channel"
    }
    #[inline]
    fn route(&self, _mesh: &Mesh, cur: (u16, u16), dst: (u16, u16)) -> Route {
        let d = xy_dir(cur, dst);
        if d == LOCAL as u8 {
            return Route::eject();
        }
        Route {
            ports: [d, 0],
            nports: 1,
            escape: NO_PORT,
        }
    }
}
