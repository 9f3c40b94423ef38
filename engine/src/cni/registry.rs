//! The plugins installed in `CNI_PATH` (`/opt/cni/bin`), found by type name.

use super::plugin::Plugin;
use super::release::PluginsRelease;
use rustc_hash::FxHashMap;

/// The set of plugin binaries a node has, and which release of containernetworking/plugins
/// the reference ones are.
pub struct Registry {
    /// The installed plugins by type name (the binary's name); a plain hash map, as every
    /// plugin execution looks its binary up once or twice.
    plugins: FxHashMap<&'static str, Box<dyn Plugin>>,
    release: PluginsRelease,
}

impl Registry {
    /// An empty registry (the default release).
    pub fn empty() -> Self {
        Registry {
            plugins: FxHashMap::default(),
            release: PluginsRelease::default(),
        }
    }

    /// The release of containernetworking/plugins the reference plugins behave as.
    pub fn release(&self) -> PluginsRelease {
        self.release
    }

    /// The same registry as another release of containernetworking/plugins.
    pub fn with_release(mut self, release: PluginsRelease) -> Self {
        self.release = release;
        self
    }

    /// Install a plugin (a later one with the same type replaces an earlier one).
    pub fn install(&mut self, plugin: Box<dyn Plugin>) {
        self.plugins.insert(plugin.type_name(), plugin);
    }

    /// The plugin with this type, as libcni's `FindInPath` would find the binary.
    pub fn find(&self, plugin_type: &str) -> Option<&dyn Plugin> {
        self.plugins.get(plugin_type).map(|p| p.as_ref())
    }

    /// The installed type names, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        let mut v: Vec<_> = self.plugins.keys().copied().collect();
        v.sort_unstable();
        v
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("release", &self.release)
            .field("plugins", &self.names())
            .finish()
    }
}

impl Registry {
    /// The plugins the lab installs on every node (`/opt/cni/bin`), reference plugins of
    /// the default release.
    pub fn standard() -> Self {
        let mut r = Registry::empty();
        for p in super::plugins::standard() {
            r.install(p);
        }
        r
    }

    /// The standard plugins with the reference plugins of `release`.
    pub fn standard_of(release: PluginsRelease) -> Self {
        Registry::standard().with_release(release)
    }
}
