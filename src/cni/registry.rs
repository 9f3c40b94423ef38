//! The plugins installed in `CNI_PATH` (`/opt/cni/bin`), found by type name.

use super::plugin::Plugin;

/// The set of plugin binaries a node has.
pub struct Registry {
    plugins: Vec<Box<dyn Plugin>>,
}

impl Registry {
    /// An empty registry.
    pub fn empty() -> Self {
        Registry {
            plugins: Vec::new(),
        }
    }

    /// Install a plugin (a later one with the same type replaces an earlier one).
    pub fn install(&mut self, plugin: Box<dyn Plugin>) {
        self.plugins.retain(|p| p.type_name() != plugin.type_name());
        self.plugins.push(plugin);
    }

    /// The plugin with this type, as libcni's `FindInPath` would find the binary.
    pub fn find(&self, plugin_type: &str) -> Option<&dyn Plugin> {
        self.plugins
            .iter()
            .find(|p| p.type_name() == plugin_type)
            .map(|p| p.as_ref())
    }

    /// The installed type names, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.plugins.iter().map(|p| p.type_name()).collect();
        v.sort_unstable();
        v
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Registry {
    /// The plugins the lab installs on every node (`/opt/cni/bin`).
    pub fn standard() -> Self {
        let mut r = Registry::empty();
        for p in super::plugins::standard() {
            r.install(p);
        }
        r
    }
}
