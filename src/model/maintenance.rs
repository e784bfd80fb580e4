//! Maintenance mode (Unleash's `maintenanceSchema` and `toggleMaintenanceSchema`).

use serde::{Deserialize, Serialize};

/// `{enabled}`: whether the service is in maintenance mode, the answer of
/// `GET /api/admin/maintenance` and the body of `POST /api/admin/maintenance`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "http", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MaintenanceMode {
    /// `true`: every change is refused until it is turned off again.
    pub enabled: bool,
}
