//! The Identity service: who the plugin is, what it can do, whether it is ready.
//! (`kubernetes-csi/csi-driver-host-path:pkg/hostpath/identityserver.go`)

use super::driver::Driver;
use super::status::Status;
use super::types::*;

impl Driver {
    /// GetPluginInfo: name and vendor_version.
    pub(crate) fn get_plugin_info(
        &mut self,
        _req: GetPluginInfoRequest,
    ) -> Result<GetPluginInfoResponse, Status> {
        if self.config.name.is_empty() {
            return Err(Status::unavailable("Driver name not configured"));
        }
        if self.config.vendor_version.is_empty() {
            return Err(Status::unavailable("Driver is missing version"));
        }
        Ok(GetPluginInfoResponse {
            name: self.config.name.clone(),
            vendor_version: self.config.vendor_version.clone(),
            manifest: StringMap::new(),
        })
    }

    /// GetPluginCapabilities: the plugin services, then the volume expansion kind.
    pub(crate) fn get_plugin_capabilities(
        &mut self,
        _req: GetPluginCapabilitiesRequest,
    ) -> Result<GetPluginCapabilitiesResponse, Status> {
        let mut capabilities: Vec<PluginCapability> = self
            .config
            .plugin_services
            .iter()
            .map(|s| PluginCapability {
                service: Some(PluginService { kind: *s }),
                volume_expansion: None,
            })
            .collect();
        if let Some(e) = self.config.volume_expansion {
            capabilities.push(PluginCapability {
                service: None,
                volume_expansion: Some(PluginVolumeExpansion { kind: e }),
            });
        }
        Ok(GetPluginCapabilitiesResponse { capabilities })
    }

    /// Probe: `ready` as a BoolValue.
    pub fn probe(&mut self, _req: ProbeRequest) -> Result<ProbeResponse, Status> {
        Ok(ProbeResponse {
            ready: Some(self.ready),
        })
    }
}
