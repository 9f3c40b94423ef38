//! The CNI wire types: results, errors and the JSON layout plugins print.
//!
//! Field names and order follow `containernetworking/cni:pkg/types/100/types.go`; the
//! printed form follows `types.PrintResult` (Go's `json.MarshalIndent` with four spaces).

use crate::cni::host::Mac;
use compact_str::CompactString;
use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

/// The well-known CNI error codes (SPEC §6 "Error", table A.7 of the reference).
pub mod code {
    /// Incompatible CNI version.
    pub const INCOMPATIBLE_VERSION: u32 = 1;
    /// Unsupported field in the network configuration.
    pub const UNSUPPORTED_FIELD: u32 = 2;
    /// Container unknown or does not exist.
    pub const UNKNOWN_CONTAINER: u32 = 3;
    /// Invalid necessary environment variables.
    pub const INVALID_ENV: u32 = 4;
    /// I/O failure.
    pub const IO_FAILURE: u32 = 5;
    /// Failed to decode content.
    pub const DECODING_FAILURE: u32 = 6;
    /// Invalid network config.
    pub const INVALID_NETWORK_CONFIG: u32 = 7;
    /// Library only: the netns given is invalid (ErrInvalidNetNS).
    pub const INVALID_NETNS: u32 = 8;
    /// Try again later.
    pub const TRY_AGAIN_LATER: u32 = 11;
    /// STATUS: the plugin cannot serve ADD.
    pub const PLUGIN_NOT_AVAILABLE: u32 = 50;
    /// STATUS: not available, existing containers may have limited connectivity.
    pub const PLUGIN_NOT_AVAILABLE_LIMITED: u32 = 51;
    /// Library only: a plain Go error returned by a plugin callback (skel wraps it).
    pub const INTERNAL: u32 = 999;
}

/// A CNI error as a plugin prints it on stdout (`pkg/types/types.go` Error: code, msg,
/// details with omitempty; no cniVersion).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CniError {
    /// The numeric CNI error code.
    pub code: u32,
    /// A short message.
    pub msg: String,
    /// Optional longer details.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub details: String,
    /// Set when the plugin printed no error at all but died ([`Crash`]): this error is then
    /// the one libcni made of it, not the plugin's stdout.
    #[serde(skip)]
    pub crash: Option<Box<Crash>>,
}

/// How a plugin process ended when it wrote neither a result nor an error: a Go panic
/// exits 2 with the panic on stderr and nothing on stdout, and libcni makes the error
/// (`pkg/invoke/raw_exec.go` pluginErr: code 0, `netplugin failed: "<stderr>"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crash {
    /// The exit status.
    pub exit_status: i32,
    /// What the process wrote on stderr.
    pub stderr: String,
}

impl CniError {
    /// An error with a code and message and no details.
    pub fn new(code: u32, msg: impl Into<String>) -> Self {
        CniError {
            code,
            msg: msg.into(),
            details: String::new(),
            crash: None,
        }
    }

    /// A plain error as skel reports it: code 999 with the error text as the message.
    pub fn internal(msg: impl Into<String>) -> Self {
        CniError::new(code::INTERNAL, msg)
    }

    /// The same error with details set.
    pub(crate) fn with_details(mut self, details: impl Into<String>) -> Self {
        self.details = details.into();
        self
    }

    /// The error as a plugin prints it on stdout.
    pub fn to_stdout(&self) -> String {
        to_go_json(self)
    }
}

impl fmt::Display for CniError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Go's types.Error.Error(): "msg; details" or just msg.
        if self.details.is_empty() {
            write!(f, "{}", self.msg)
        } else {
            write!(f, "{}; {}", self.msg, self.details)
        }
    }
}

impl std::error::Error for CniError {}

/// One interface in a result (`types100.Interface`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Interface {
    /// Interface name (`cni0`, `veth1a2b3c4d`, `eth0`), inline (a Linux name is at most 15
    /// bytes).
    #[serde(with = "text::compact")]
    pub name: CompactString,
    /// Hardware address as the plugin wrote it (see [`MacText`]).
    #[serde(default, skip_serializing_if = "MacText::is_empty", with = "text::mac")]
    pub mac: MacText,
    /// MTU (1.1.0 only).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mtu: u32,
    /// The netns path for in-container interfaces (shared with the runtime's netns text);
    /// `None` for host interfaces (Go's empty string).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "text::non_empty"
    )]
    pub sandbox: Option<Arc<str>>,
}

// Three a pod in its cached result (the bridge, the host veth, eth0).
const _: () = assert!(std::mem::size_of::<Interface>() <= 64);

/// A result's hardware address as the plugin wrote it. Go's `Interface.Mac` is a string
/// that a plugin may copy from its config verbatim (tuning's `mac`, in any case or form
/// `net.ParseMAC` reads), so it is that text; held as the six bytes when the text is how
/// `ip link` prints them (`0a:58:0a:f4:01:02`, what the plugins write), else as the text.
/// Equal when the texts are equal.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct MacText(MacRepr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum MacRepr {
    /// The text is [`Mac`]'s own.
    Printed(Mac),
    /// Any other text (empty for none).
    Text(Box<str>),
}

impl MacText {
    /// Whether there is none (Go's empty string).
    pub fn is_empty(&self) -> bool {
        matches!(&self.0, MacRepr::Text(t) if t.is_empty())
    }

    /// The text, inline.
    pub fn to_compact_string(&self) -> CompactString {
        match &self.0 {
            MacRepr::Printed(mac) => mac.to_compact_string(),
            MacRepr::Text(t) => CompactString::new(t),
        }
    }
}

impl Default for MacText {
    fn default() -> Self {
        MacText(MacRepr::Text(Box::default()))
    }
}

impl From<Mac> for MacText {
    fn from(mac: Mac) -> Self {
        MacText(MacRepr::Printed(mac))
    }
}

impl From<&str> for MacText {
    fn from(text: &str) -> Self {
        match text.parse::<Mac>() {
            Ok(mac) if mac == text => MacText(MacRepr::Printed(mac)),
            _ => MacText(MacRepr::Text(text.into())),
        }
    }
}

impl fmt::Display for MacText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            MacRepr::Printed(mac) => mac.fmt(f),
            MacRepr::Text(t) => f.write_str(t),
        }
    }
}

/// As the text's own `Debug` (quoted).
impl fmt::Debug for MacText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.to_compact_string().as_str(), f)
    }
}

/// The text equals `other`.
impl PartialEq<str> for MacText {
    fn eq(&self, other: &str) -> bool {
        match &self.0 {
            MacRepr::Printed(mac) => mac == other,
            MacRepr::Text(t) => **t == *other,
        }
    }
}

impl PartialEq<&str> for MacText {
    fn eq(&self, other: &&str) -> bool {
        *self == **other
    }
}

/// The text is `mac`'s as `ip link` prints it ([`Mac`]'s `PartialEq<str>`).
impl PartialEq<Mac> for MacText {
    fn eq(&self, mac: &Mac) -> bool {
        match &self.0 {
            MacRepr::Printed(m) => m == mac,
            MacRepr::Text(t) => *mac == **t,
        }
    }
}

impl Interface {
    /// The sandbox as Go's string holds it: the netns path, empty for a host interface.
    pub fn sandbox_path(&self) -> &str {
        self.sandbox.as_deref().unwrap_or_default()
    }
}

/// One address in a result (`types100.IPConfig`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct IpConfig {
    /// Index into `interfaces` (absent in a delegated IPAM result). Go declares it first,
    /// so it prints before `address`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<IfIndex>,
    /// The address with its prefix length, host bits kept (`10.244.1.2/24`), as Go's
    /// `net.ParseCIDR` reads it and `IPNet.String` prints it.
    #[serde(with = "text::cidr")]
    pub address: IpNet,
    /// The gateway, if any (Go's nil `net.IP`, omitted).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "text::ip")]
    pub gateway: Option<IpAddr>,
}

// One a pod in its cached result: the index's bytes are unaligned, so the address, the
// gateway and it pack into 44 bytes (an `Option<usize>` made it 56).
const _: () = assert!(std::mem::size_of::<IpConfig>() <= 44);

/// An address's interface index (`IpConfig.Interface`): any `usize` a plugin printed, held
/// as its 8 bytes without alignment, so an [`IpConfig`] needs no padding around it. Read
/// and printed as the number.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IfIndex([u8; 8]);

impl IfIndex {
    /// The index `i`.
    pub const fn new(i: usize) -> Self {
        IfIndex((i as u64).to_le_bytes())
    }

    /// The index.
    pub const fn get(self) -> usize {
        u64::from_le_bytes(self.0) as usize
    }
}

impl fmt::Debug for IfIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

impl Serialize for IfIndex {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

impl<'de> Deserialize<'de> for IfIndex {
    /// Read as a `usize` is, with its errors (a negative index among them).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        usize::deserialize(d).map(IfIndex::new)
    }
}

/// One route in a result (`types.Route`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Route {
    /// Destination, as written (`0.0.0.0/0`, `10.96.0.0/12`); `None` is Go's zero
    /// `IPNet` (a route without `dst`, which Go reads as that zero value), printed `<nil>`.
    #[serde(default, with = "text::route_dst")]
    pub dst: Option<IpNet>,
    /// Next hop; `None` means the IP's gateway may be used.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "text::ip")]
    pub gw: Option<IpAddr>,
}

/// An optional address as Go's `%v` prints a `net.IP`: `<nil>` for none.
pub(crate) struct GoIp(pub Option<IpAddr>);

impl fmt::Display for GoIp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(ip) => ip.fmt(f),
            None => f.write_str("<nil>"),
        }
    }
}

/// The typed fields of a result as Go's JSON carries them: text, read with Go's parsers
/// and their errors (`net.ParseCIDR`, `net.ParseIP`, `net.ParseMAC`).
mod text {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::borrow::Cow;

    /// The JSON string; `null` reads as Go reads it into a string, empty.
    fn string<'de, D: Deserializer<'de>>(d: D) -> Result<Cow<'de, str>, D::Error> {
        Ok(Option::<Cow<'de, str>>::deserialize(d)?.unwrap_or_default())
    }

    /// `types.IPNet`: `net.ParseCIDR`, the address keeping its host bits.
    pub mod cidr {
        use super::*;
        use ipnet::IpNet;

        pub fn serialize<S: Serializer>(net: &IpNet, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(net)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<IpNet, D::Error> {
            let text = string(d)?;
            text.parse()
                .map_err(|_| D::Error::custom(format!("invalid CIDR address: {text}")))
        }
    }

    /// A route's `types.IPNet`: Go prints its zero value `<nil>` (which no parser reads).
    pub mod route_dst {
        use super::*;
        use ipnet::IpNet;

        pub fn serialize<S: Serializer>(net: &Option<IpNet>, s: S) -> Result<S::Ok, S::Error> {
            match net {
                Some(net) => s.collect_str(net),
                None => s.serialize_str("<nil>"),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<IpNet>, D::Error> {
            super::cidr::deserialize(d).map(Some)
        }
    }

    /// `net.IP` as JSON text: empty is Go's nil IP (omitted when printed).
    pub mod ip {
        use super::*;
        use std::net::IpAddr;

        pub fn serialize<S: Serializer>(ip: &Option<IpAddr>, s: S) -> Result<S::Ok, S::Error> {
            match ip {
                Some(ip) => s.collect_str(ip),
                None => s.serialize_str(""),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<IpAddr>, D::Error> {
            let text = string(d)?;
            if text.is_empty() {
                return Ok(None);
            }
            text.parse()
                .map(Some)
                .map_err(|_| D::Error::custom(format!("invalid IP address: {text}")))
        }
    }

    /// A string kept inline.
    pub mod compact {
        use super::*;
        use compact_str::CompactString;

        pub fn serialize<S: Serializer>(text: &CompactString, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(text)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CompactString, D::Error> {
            string(d).map(|text| CompactString::new(text))
        }
    }

    /// A hardware address as text ([`MacText`](crate::cni::types::MacText)).
    pub mod mac {
        use super::*;
        use crate::cni::types::MacText;

        pub fn serialize<S: Serializer>(mac: &MacText, s: S) -> Result<S::Ok, S::Error> {
            s.collect_str(mac)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<MacText, D::Error> {
            string(d).map(|text| MacText::from(&*text))
        }
    }

    /// A result's DNS settings: printed as the struct (`{}` when none), read back boxed
    /// only when any is set.
    pub mod dns {
        use super::*;
        use crate::cni::types::{Dns, NO_DNS};
        use serde::Serialize;

        pub fn serialize<S: Serializer>(dns: &Option<Box<Dns>>, s: S) -> Result<S::Ok, S::Error> {
            dns.as_deref().unwrap_or(&NO_DNS).serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Box<Dns>>, D::Error> {
            Dns::deserialize(d).map(Dns::boxed_if_set)
        }
    }

    /// A string Go omits when empty, held shared: empty is none.
    pub mod non_empty {
        use super::*;
        use std::sync::Arc;

        pub fn serialize<S: Serializer>(text: &Option<Arc<str>>, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str(text.as_deref().unwrap_or_default())
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Arc<str>>, D::Error> {
            let text = string(d)?;
            Ok((!text.is_empty()).then(|| Arc::from(&*text)))
        }
    }
}

/// DNS settings (`types.DNS`). Go marshals the struct even when empty (`"dns": {}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Dns {
    /// Name servers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nameservers: Vec<String>,
    /// Local domain.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub domain: String,
    /// Search domains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<String>,
    /// Resolver options.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

/// No DNS settings: what a result without any prints (`{}`).
static NO_DNS: Dns = Dns {
    nameservers: Vec::new(),
    domain: String::new(),
    search: Vec::new(),
    options: Vec::new(),
};

impl Dns {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == NO_DNS
    }

    /// The settings as a result holds them: boxed when any is set, `None` when empty.
    pub fn boxed_if_set(self) -> Option<Box<Dns>> {
        (!self.is_empty()).then(|| Box::new(self))
    }
}

/// The result of an ADD (`types100.Result`), in the field order Go prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct CniResult {
    /// The version the result is printed in (inline).
    #[serde(rename = "cniVersion", with = "text::compact")]
    pub cni_version: CompactString,
    /// Interfaces created or touched.
    #[serde(default, skip_serializing_if = "List::is_empty")]
    pub interfaces: List<Interface>,
    /// Addresses assigned.
    #[serde(default, skip_serializing_if = "List::is_empty")]
    pub ips: List<IpConfig>,
    /// Routes added in the container.
    #[serde(default, skip_serializing_if = "List::is_empty")]
    pub routes: List<Route>,
    /// DNS settings, held only when any is set (most results have none); printed `{}`
    /// when `None`, as Go prints its empty struct ([`CniResult::dns`]).
    #[serde(default, with = "text::dns")]
    pub dns: Option<Box<Dns>>,
    /// Printed in the current (1.0) layout whatever `cni_version` says: `types.PrintResult`
    /// of a `current.Result` labelled with the config's older version converts nothing
    /// (`convert.Convert` sees the same version on both sides), as Debian's 1.1.1 loopback
    /// prints for 0.2.0 and 0.3.x. Not part of the JSON.
    #[serde(skip)]
    pub printed_as_current: bool,
}

// One a running pod, in its cached result (an `Arc`): the lists are held at their length.
const _: () = assert!(std::mem::size_of::<CniResult>() <= 88);

/// A result's list (its interfaces, IPs or routes), held at its length: a boxed slice, 8
/// bytes smaller than a `Vec`, with no spare room. A cached result is one a running pod
/// and is not changed once cached; plugins build a result with [`List::push`] and
/// [`List::retain`], which reallocate, on lists of a few elements. Reads as a slice;
/// serialized, deserialized, compared and `Debug`ged as the `Vec` it was.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct List<T>(Box<[T]>);

impl<T> List<T> {
    /// An empty list (no allocation).
    pub fn new() -> Self {
        List(Box::default())
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Add `value` at the end.
    pub fn push(&mut self, value: T) {
        self.edit(|v| v.push(value));
    }

    /// Keep only the elements for which `keep` is true, in order.
    pub fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        self.edit(|v| v.retain(keep));
    }

    /// Remove every element.
    pub fn clear(&mut self) {
        self.0 = Box::default();
    }

    /// Change the list as a `Vec`, then hold it at its new length again.
    fn edit(&mut self, change: impl FnOnce(&mut Vec<T>)) {
        let mut v = std::mem::take(&mut self.0).into_vec();
        change(&mut v);
        self.0 = v.into_boxed_slice();
    }
}

impl<T> std::ops::Deref for List<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> std::ops::DerefMut for List<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<T> From<Vec<T>> for List<T> {
    fn from(v: Vec<T>) -> Self {
        List(v.into_boxed_slice())
    }
}

impl<T> FromIterator<T> for List<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        List(iter.into_iter().collect())
    }
}

impl<T> IntoIterator for List<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_vec().into_iter()
    }
}

impl<'a, T> IntoIterator for &'a List<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<'a, T> IntoIterator for &'a mut List<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter_mut()
    }
}

impl<T: fmt::Debug> fmt::Debug for List<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: PartialEq> PartialEq<Vec<T>> for List<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        *self.0 == **other
    }
}

impl<T: Serialize> Serialize for List<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(d).map(List::from)
    }
}

impl CniResult {
    /// The result as libcni reads a plugin's stdout: with the decoder of its `cniVersion`.
    /// A result printed in the current layout under a 0.1.0/0.2.0 label loses its
    /// interfaces and IPs (`types020` knows only `ip4`/`ip6`).
    pub(crate) fn as_libcni_reads_it(self: std::sync::Arc<Self>) -> std::sync::Arc<Self> {
        if !self.printed_as_current {
            return self;
        }
        let mut r = self.as_ref().clone();
        r.printed_as_current = false;
        if matches!(r.cni_version.as_str(), "0.1.0" | "0.2.0") {
            r.interfaces.clear();
            r.ips.clear();
            r.routes.clear();
        }
        std::sync::Arc::new(r)
    }

    /// The DNS settings (all empty when none are set).
    pub fn dns(&self) -> &Dns {
        self.dns.as_deref().unwrap_or(&NO_DNS)
    }

    /// The result as a plugin prints it on stdout.
    pub fn to_stdout(&self) -> String {
        to_go_json(self)
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Serialize the way Go's `json.MarshalIndent(v, "", "    ")` does (four-space indent).
pub(crate) fn to_go_json<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(256);
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    // Serializing our own plain structs into memory cannot fail.
    if value.serialize(&mut ser).is_err() {
        return String::from("{}");
    }
    let text = String::from_utf8(out).unwrap_or_default();
    go_html_escape(&text)
}

/// Go's encoder escapes `<`, `>`, `&`, U+2028 and U+2029 inside strings (`json.Marshal`
/// HTML-escapes by default, so `types.PrintResult` prints `\u003cnil\u003e`). Those
/// characters only occur inside strings in JSON text, so replacing them everywhere is exact.
fn go_html_escape(text: &str) -> String {
    if !text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipam_result_prints_like_host_local() {
        let r = CniResult {
            cni_version: "1.0.0".into(),
            ips: vec![IpConfig {
                address: "10.10.0.2/29".parse().unwrap(),
                gateway: "10.10.0.1".parse().ok(),
                interface: None,
            }]
            .into(),
            ..Default::default()
        };
        // Captured from Debian's /usr/lib/cni/host-local 1.1.1.
        let real = "{\n    \"cniVersion\": \"1.0.0\",\n    \"ips\": [\n        {\n            \"address\": \"10.10.0.2/29\",\n            \"gateway\": \"10.10.0.1\"\n        }\n    ],\n    \"dns\": {}\n}";
        assert_eq!(r.to_stdout(), real);
    }

    #[test]
    fn results_read_and_print_go_text() {
        // Host bits kept, a nil gateway omitted, an empty sandbox none: printed back as read.
        let text = "{\n    \"cniVersion\": \"1.0.0\",\n    \"interfaces\": [\n        {\n            \"name\": \"eth0\",\n            \"mac\": \"0A:58:0A:F4:01:02\",\n            \"sandbox\": \"/var/run/netns/x\"\n        }\n    ],\n    \"ips\": [\n        {\n            \"interface\": 0,\n            \"address\": \"10.244.1.2/24\",\n            \"gateway\": \"10.244.1.1\"\n        },\n        {\n            \"address\": \"fd00::2/64\"\n        }\n    ],\n    \"routes\": [\n        {\n            \"dst\": \"0.0.0.0/0\"\n        }\n    ],\n    \"dns\": {}\n}";
        let r: CniResult = serde_json::from_str(text).unwrap();
        assert_eq!(r.ips[0].address.to_string(), "10.244.1.2/24");
        assert_eq!(r.ips[1].gateway, None);
        assert_eq!(r.interfaces[0].sandbox_path(), "/var/run/netns/x");
        assert_eq!(r.to_stdout(), text);
        // Go's zero values: an empty gateway or sandbox, a null gateway.
        let r: CniResult = serde_json::from_str(
            r#"{"cniVersion":"1.0.0","interfaces":[{"name":"cni0","sandbox":""}],"ips":[{"address":"10.0.0.2/8","gateway":""}],"routes":[{"dst":"10.96.0.0/12","gw":null}]}"#,
        )
        .unwrap();
        assert_eq!(r.interfaces[0].sandbox, None);
        assert_eq!(r.ips[0].gateway, None);
        assert_eq!(r.routes[0].gw, None);
        // What Go's parsers refuse, with their errors.
        for (bad, msg) in [
            (
                r#"{"address":"10.0.0.2"}"#,
                "invalid CIDR address: 10.0.0.2",
            ),
            (
                r#"{"address":"10.0.0.2/33"}"#,
                "invalid CIDR address: 10.0.0.2/33",
            ),
            (
                r#"{"address":"10.0.0.2/8","gateway":"10.0.0"}"#,
                "invalid IP address: 10.0.0",
            ),
        ] {
            let e = serde_json::from_str::<IpConfig>(bad)
                .unwrap_err()
                .to_string();
            assert!(e.starts_with(msg), "{bad}: {e}");
        }
        let e = serde_json::from_str::<Route>(r#"{"dst":"<nil>"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("invalid CIDR address: <nil>"), "{e}");
        // A config route without dst prints Go's zero IPNet.
        let nil = Route {
            dst: None,
            gw: None,
        };
        assert_eq!(serde_json::to_string(&nil).unwrap(), r#"{"dst":"<nil>"}"#);
        // A route without dst reads as that zero value, as Go's decoder leaves it.
        let read: Route = serde_json::from_str(r#"{"gw":"10.0.0.1"}"#).unwrap();
        assert_eq!(read.dst, None);
    }

    #[test]
    fn an_interface_index_reads_and_prints_as_a_usize_does() {
        // Any usize round-trips, null is none, and bad input keeps usize's errors.
        for text in [
            r#"{"interface":0,"address":"10.0.0.2/8"}"#,
            r#"{"interface":18446744073709551615,"address":"10.0.0.2/8"}"#,
        ] {
            let ip: IpConfig = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&ip).unwrap(), text);
        }
        let ip: IpConfig =
            serde_json::from_str(r#"{"interface":null,"address":"10.0.0.2/8"}"#).unwrap();
        assert_eq!(ip.interface, None);
        for bad in ["-1", "1.5", "\"1\"", "18446744073709551616"] {
            let text = format!(r#"{{"interface":{bad},"address":"10.0.0.2/8"}}"#);
            let want = serde_json::from_str::<Option<usize>>(bad).unwrap_err();
            let got = serde_json::from_str::<IpConfig>(&text).unwrap_err();
            let (want, got) = (want.to_string(), got.to_string());
            assert_eq!(got.split(" at line").next(), want.split(" at line").next());
        }
        let ip = IpConfig {
            interface: Some(IfIndex::new(2)),
            ..Default::default()
        };
        assert_eq!(format!("{:?}", ip.interface), "Some(2)");
    }

    #[test]
    fn a_mac_is_the_text_the_plugin_wrote() {
        // `ip link`'s own text is held as bytes; any other text as written.
        for text in [
            "0a:58:0a:f4:01:02",
            "0A:58:0A:F4:01:02",
            "0a-58-0a-f4-01-02",
            "0a58.0af4.0102",
            "not a mac",
            "",
        ] {
            let mac = MacText::from(text);
            assert_eq!(mac.to_string(), text);
            assert_eq!(mac.to_compact_string(), text);
            assert_eq!(format!("{mac:?}"), format!("{text:?}"));
            assert!(mac == text);
            assert_eq!(mac.is_empty(), text.is_empty());
            let json = format!(r#"{{"name":"eth0","mac":{text:?}}}"#);
            let intf: Interface = serde_json::from_str(&json).unwrap();
            assert_eq!(intf.mac, mac);
        }
        assert!(matches!(
            MacText::from("0a:58:0a:f4:01:02").0,
            MacRepr::Printed(_)
        ));
        assert!(matches!(
            MacText::from("0A:58:0A:F4:01:02").0,
            MacRepr::Text(_)
        ));
        let mac: Mac = "0a:58:0a:f4:01:02".parse().unwrap();
        assert_eq!(MacText::from(mac), MacText::from("0a:58:0a:f4:01:02"));
        let (printed, upper) = (MacText::from(mac), MacText::from("0A:58:0A:F4:01:02"));
        assert!(printed == mac);
        assert!(mac == printed);
        assert!(upper != mac);
        assert!(mac != upper);
        assert_eq!(MacText::default(), MacText::from(""));
    }

    #[test]
    fn strings_are_html_escaped_like_go() {
        // Captured from Debian's host-local 1.1.1 (a range set without a subnet).
        let e = CniError::internal("invalid range set 0: IP <nil> not v4 nor v6");
        assert_eq!(
            e.to_stdout(),
            "{\n    \"code\": 999,\n    \"msg\": \"invalid range set 0: IP \\u003cnil\\u003e not v4 nor v6\"\n}"
        );
    }

    #[test]
    fn error_prints_without_empty_details() {
        let e = CniError::internal("failed to allocate for range 0: boom");
        assert_eq!(
            e.to_stdout(),
            "{\n    \"code\": 999,\n    \"msg\": \"failed to allocate for range 0: boom\"\n}"
        );
    }
}
