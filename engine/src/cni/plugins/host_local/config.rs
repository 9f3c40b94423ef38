//! host-local's configuration: `LoadIPAMConfig` (`containernetworking/plugins:plugins/ipam/
//! host-local/backend/allocator/config.go`). IPAM gets the whole network config; this reads
//! `ipam` (legacy single range, `ranges`, `routes`, `dataDir`, `resolvConf`),
//! `runtimeConfig.ipRanges` / `runtimeConfig.ips`, `args.cni.ips` and `CNI_ARGS`.
//!
//! Decoding follows Go's `encoding/json` where a user can see it: keys match field names
//! case-insensitively (exact match preferred, the later duplicate wins), `null` leaves a field
//! unset, a value of the wrong JSON type gives `json: cannot unmarshal <kind> into Go struct
//! field <Struct>.<path> of type <type>` (the first such error is reported once decoding ends),
//! and a parse error inside a custom unmarshaller (`invalid CIDR address: …`, `invalid IP
//! address: …`) stops decoding at once and wins. Keys are visited in sorted order, which is
//! the order libcni sends them (it re-marshals the config from a Go map).

use super::args::{load_env_args, parse_cni_ip};
use super::range::{Cidr, RangeConf, RangeSet, canonical, parse_ip};
use crate::cni::types::Route;
use serde_json::{Map, Value};
use std::net::IpAddr;

/// The IPAM configuration after `LoadIPAMConfig`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IpamConfig {
    /// The network name (the data directory's name).
    pub name: String,
    /// The config's `cniVersion`, as written.
    pub cni_version: String,
    /// `ipam.type`.
    pub ipam_type: String,
    /// `ipam.routes`, printed the way Go re-marshals them.
    pub routes: Vec<Route>,
    /// `ipam.dataDir` ("" means `/var/lib/cni/networks`).
    pub data_dir: String,
    /// `ipam.resolvConf`.
    pub resolv_conf: String,
    /// The canonical range sets, in allocation order.
    pub ranges: Vec<RangeSet>,
    /// Requested IPs: CNI_ARGS `IP`, then `args.cni.ips`, then `runtimeConfig.ips`.
    pub ip_args: Vec<IpAddr>,
}

/// The `ipam` object as decoded, before validation.
#[derive(Debug, Default)]
struct RawIpam {
    ipam_type: String,
    routes: Vec<Route>,
    data_dir: String,
    resolv_conf: String,
    legacy: RangeConf,
    ranges: Vec<Vec<RangeConf>>,
}

/// The whole stdin as decoded (`allocator.Net`).
#[derive(Debug, Default)]
struct RawNet {
    name: String,
    cni_version: String,
    ipam: Option<RawIpam>,
    ip_ranges: Vec<Vec<RangeConf>>,
    /// `runtimeConfig.ips`; `None` for an entry Go would hold as an empty IP.
    rc_ips: Vec<Option<IpAddr>>,
    /// `args.cni.ips`.
    args_ips: Vec<Option<IpAddr>>,
}

/// `LoadIPAMConfig(stdin, CNI_ARGS)`. Errors are the plain Go error texts (skel reports them
/// with code 999).
pub fn load_ipam_config(conf: &Value, env_args: &str) -> Result<IpamConfig, String> {
    prepare(conf).finish(env_args)
}

/// What `LoadIPAMConfig` finds in the stdin document alone, before `CNI_ARGS` is read: the
/// same document always gives the same answer, so a runtime that sends the same config on
/// every call can decode it once ([`Prepared::finish`] adds `CNI_ARGS`).
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    /// An error found before `CNI_ARGS` is parsed (decoding, no `ipam` key).
    early: Option<String>,
    /// `args.cni.ips` then `runtimeConfig.ips` (`None`: an entry Go holds as an empty IP).
    doc_ips: Vec<Option<IpAddr>>,
    /// The configuration without the `CNI_ARGS` IP, or the error found after the IPs.
    late: Result<std::sync::Arc<IpamConfig>, String>,
}

/// Decode the stdin document (everything of `LoadIPAMConfig` but `CNI_ARGS`).
pub(crate) fn prepare(conf: &Value) -> Prepared {
    let early = |e: String| Prepared {
        early: Some(e),
        doc_ips: Vec::new(),
        late: Err(String::new()),
    };
    let mut dec = Decoder::default();
    let net = match dec.net(conf) {
        Ok(net) => net,
        Err(e) => return early(e),
    };
    if let Some(e) = dec.saved {
        return early(e);
    }
    let doc_ips: Vec<Option<IpAddr>> = net.args_ips.iter().chain(&net.rc_ips).copied().collect();
    match after_ips(net) {
        Err(Early(e)) => early(e),
        Ok(late) => Prepared {
            early: None,
            doc_ips,
            late: late.map(std::sync::Arc::new),
        },
    }
}

/// An error `LoadIPAMConfig` reports before reading `CNI_ARGS`.
struct Early(String);

impl Prepared {
    /// The rest of `LoadIPAMConfig`: `CNI_ARGS` (its `IP` first among the requested IPs),
    /// then the checks on the ranges, in the upstream order.
    pub fn finish(&self, env_args: &str) -> Result<IpamConfig, String> {
        let (conf, requested) = self.finish_shared(env_args)?;
        let mut conf = IpamConfig::clone(&conf);
        conf.ip_args = requested;
        Ok(conf)
    }

    /// [`Prepared::finish`] without copying the decoded configuration: it is shared (its
    /// `ip_args` left empty) and the requested IPs come beside it. The same errors.
    pub(crate) fn finish_shared(
        &self,
        env_args: &str,
    ) -> Result<(std::sync::Arc<IpamConfig>, Vec<IpAddr>), String> {
        if let Some(e) = &self.early {
            return Err(e.clone());
        }
        let mut ip_args: Vec<Option<IpAddr>> = Vec::new();
        if !env_args.is_empty() {
            let e = load_env_args(env_args)?;
            if let Some(ip) = e.ip {
                ip_args = vec![Some(ip)];
            }
        }
        ip_args.extend(self.doc_ips.iter().copied());
        let mut requested: Vec<IpAddr> = Vec::with_capacity(ip_args.len());
        for ip in ip_args {
            match ip {
                Some(ip) => requested.push(canonical(ip)),
                None => return Err("cannot understand ip: IP <nil> not v4 nor v6".to_string()),
            }
        }
        Ok((self.late.clone()?, requested))
    }
}

/// From the decoded document to the configuration (with no requested IPs yet): the `ipam`
/// key, the range sets, their version limit and overlaps.
fn after_ips(net: RawNet) -> Result<Result<IpamConfig, String>, Early> {
    let Some(ipam) = net.ipam else {
        return Err(Early("IPAM config missing 'ipam' key".to_string()));
    };
    Ok(ranges_config(
        net.name,
        net.cni_version,
        net.ip_ranges,
        ipam,
    ))
}

/// The range sets in allocation order, canonicalized and checked, and the rest of the
/// configuration around them.
fn ranges_config(
    name: String,
    cni_version: String,
    ip_ranges: Vec<Vec<RangeConf>>,
    ipam: RawIpam,
) -> Result<IpamConfig, String> {
    // Order: runtimeConfig.ipRanges, then the legacy single range, then ipam.ranges.
    let mut sets: Vec<Vec<RangeConf>> = ip_ranges;
    if ipam.legacy.subnet.is_some() {
        sets.push(vec![ipam.legacy.clone()]);
    }
    sets.extend(ipam.ranges);
    if sets.is_empty() {
        return Err("no IP ranges specified".to_string());
    }

    let mut ranges: Vec<RangeSet> = Vec::with_capacity(sets.len());
    let (mut v4, mut v6) = (0usize, 0usize);
    for (i, set) in sets.iter().enumerate() {
        let rs = RangeSet::canonicalize(set).map_err(|e| format!("invalid range set {i}: {e}"))?;
        if rs.is_ipv4() {
            v4 += 1;
        } else {
            v6 += 1;
        }
        ranges.push(rs);
    }
    // CNI spec 0.2.0 and below supported only one v4 and one v6 address.
    if (v4 > 1 || v6 > 1) && !version_at_least(&cni_version, (0, 3, 0)) {
        return Err(format!(
            "CNI version {} does not support more than 1 address per family",
            cni_version
        ));
    }
    for (i, p1) in ranges.iter().enumerate() {
        for (j, p2) in ranges.iter().enumerate().skip(i + 1) {
            if p1.overlaps(p2) {
                return Err(format!("range set {i} overlaps with {j}"));
            }
        }
    }

    Ok(IpamConfig {
        name,
        cni_version,
        ipam_type: ipam.ipam_type,
        routes: ipam.routes,
        data_dir: ipam.data_dir,
        resolv_conf: ipam.resolv_conf,
        ranges,
        ip_args: Vec::new(),
    })
}

/// `version.GreaterThanOrEqualTo` over `version.ParseVersion` ("" is 0.1.0; one to three
/// numeric parts); false when the version does not parse.
fn version_at_least(v: &str, min: (i64, i64, i64)) -> bool {
    if v.is_empty() {
        return (0, 1, 0) >= min;
    }
    let parts: Vec<&str> = v.split('.').collect();
    if parts.len() > 3 {
        return false;
    }
    let mut nums = [0i64; 3];
    for (slot, part) in nums.iter_mut().zip(&parts) {
        match part.parse::<i64>() {
            Ok(n) => *slot = n,
            Err(_) => return false,
        }
    }
    (nums[0], nums[1], nums[2]) >= min
}

/// The JSON kind Go names in `UnmarshalTypeError`.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's field lookup: the field whose name equals the key exactly, else case-insensitively.
fn field_of<'f>(key: &str, fields: &[&'f str]) -> Option<&'f str> {
    fields
        .iter()
        .find(|f| **f == key)
        .or_else(|| fields.iter().find(|f| f.eq_ignore_ascii_case(key)))
        .copied()
}

/// A small model of Go's decoder state: the first type error is saved, hard errors return.
#[derive(Default)]
struct Decoder {
    saved: Option<String>,
}

type Hard<T> = Result<T, String>;

fn type_error(v: &Value, strct: &str, path: &str, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go struct field {strct}.{path} of type {go_type}",
        kind(v)
    )
}

impl Decoder {
    fn save(&mut self, v: &Value, strct: &str, path: &str, go_type: &str) {
        if self.saved.is_none() {
            self.saved = Some(type_error(v, strct, path, go_type));
        }
    }

    /// A `string` field.
    fn string(&mut self, v: &Value, strct: &str, path: &str) -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => {
                self.save(other, strct, path, "string");
                String::new()
            }
        }
    }

    /// A `net.IP` field (TextUnmarshaler): "" and null leave it unset.
    fn net_ip(&mut self, v: &Value, strct: &str, path: &str) -> Hard<Option<IpAddr>> {
        match v {
            Value::Null => Ok(None),
            Value::String(s) if s.is_empty() => Ok(None),
            Value::String(s) => match parse_ip(s) {
                Some(ip) => Ok(Some(ip)),
                None => Err(format!("invalid IP address: {s}")),
            },
            other => {
                self.save(other, strct, path, "net.IP");
                Ok(None)
            }
        }
    }

    /// A `types.IPNet` field: its UnmarshalJSON decodes a string (null → "") and parses it,
    /// so every failure stops decoding.
    fn ipnet(&mut self, v: &Value, strct: &str, path: &str) -> Hard<Cidr> {
        match v {
            Value::Null => Cidr::parse(""),
            Value::String(s) => Cidr::parse(s),
            other => Err(type_error(other, strct, path, "string")),
        }
    }

    /// An `[]*ip.IP` field.
    fn ip_list(&mut self, v: &Value, strct: &str, path: &str) -> Hard<Vec<Option<IpAddr>>> {
        let items = match v {
            Value::Null => return Ok(Vec::new()),
            Value::Array(items) => items,
            other => {
                self.save(other, strct, path, "[]*ip.IP");
                return Ok(Vec::new());
            }
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            match item {
                Value::String(s) => out.push(parse_cni_ip(s)?),
                // A null entry is a nil *ip.IP; the real plugin dereferences it and crashes.
                // The lab reports it like an empty IP instead.
                Value::Null => out.push(None),
                other => {
                    self.save(other, strct, path, "*ip.IP");
                    out.push(None);
                }
            }
        }
        Ok(out)
    }

    /// An `allocator.Range` object.
    fn range(&mut self, v: &Value, parent: &str, path: &str) -> Hard<Option<RangeConf>> {
        let obj = match v {
            Value::Object(o) => o,
            // A null element of a []Range is a zero Range.
            Value::Null => return Ok(Some(RangeConf::default())),
            other => {
                self.save(other, parent, path, "allocator.Range");
                return Ok(Some(RangeConf::default()));
            }
        };
        let mut r = RangeConf::default();
        self.range_fields(obj, "Range", path, &mut r)?;
        Ok(Some(r))
    }

    /// The four range keys of an object (a `Range`, or `ipam` with its embedded `*Range`).
    /// Returns whether the object had any of them.
    fn range_fields(
        &mut self,
        obj: &Map<String, Value>,
        strct: &str,
        path: &str,
        r: &mut RangeConf,
    ) -> Hard<()> {
        const FIELDS: &[&str] = &["rangeStart", "rangeEnd", "subnet", "gateway"];
        for (k, v) in obj {
            let Some(f) = field_of(k, FIELDS) else {
                continue;
            };
            let p = format!("{path}.{f}");
            match f {
                "subnet" => r.subnet = Some(self.ipnet(v, strct, &p)?),
                "rangeStart" => r.range_start = self.net_ip(v, strct, &p)?,
                "rangeEnd" => r.range_end = self.net_ip(v, strct, &p)?,
                _ => r.gateway = self.net_ip(v, strct, &p)?,
            }
        }
        Ok(())
    }

    /// A `[]RangeSet` field.
    fn range_sets(&mut self, v: &Value, strct: &str, path: &str) -> Hard<Vec<Vec<RangeConf>>> {
        let sets = match v {
            Value::Null => return Ok(Vec::new()),
            Value::Array(a) => a,
            other => {
                self.save(other, strct, path, "[]allocator.RangeSet");
                return Ok(Vec::new());
            }
        };
        let mut out = Vec::with_capacity(sets.len());
        for set in sets {
            let items = match set {
                Value::Array(a) => a,
                Value::Null => {
                    out.push(Vec::new());
                    continue;
                }
                other => {
                    self.save(other, strct, path, "allocator.RangeSet");
                    out.push(Vec::new());
                    continue;
                }
            };
            let mut ranges = Vec::with_capacity(items.len());
            for item in items {
                if let Some(r) = self.range(item, strct, path)? {
                    ranges.push(r);
                }
            }
            out.push(ranges);
        }
        Ok(out)
    }

    /// `ipam.routes` (`[]*types.Route`; each Route has its own UnmarshalJSON, so a bad
    /// element stops decoding with the outer field's context).
    fn routes(&mut self, v: &Value) -> Hard<Vec<Route>> {
        const S: &str = "IPAMConfig";
        const P: &str = "ipam.routes";
        let items = match v {
            Value::Null => return Ok(Vec::new()),
            Value::Array(a) => a,
            other => {
                self.save(other, S, P, "[]*types.Route");
                return Ok(Vec::new());
            }
        };
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let obj = match item {
                Value::Object(o) => o,
                Value::Null => continue,
                other => return Err(type_error(other, S, P, "types.route")),
            };
            let mut dst: Option<Cidr> = None;
            let mut gw: Option<IpAddr> = None;
            for (k, v) in obj {
                match field_of(k, &["dst", "gw"]) {
                    Some("dst") => {
                        dst = Some(match v {
                            Value::Null => Cidr::parse("")?,
                            Value::String(s) => Cidr::parse(s)?,
                            other => return Err(type_error(other, S, P, "string")),
                        })
                    }
                    Some(_) => {
                        gw = match v {
                            Value::Null => None,
                            Value::String(s) if s.is_empty() => None,
                            Value::String(s) => Some(
                                parse_ip(s).ok_or_else(|| format!("invalid IP address: {s}"))?,
                            ),
                            other => return Err(type_error(other, S, P, "net.IP")),
                        }
                    }
                    None => {}
                }
            }
            out.push(Route {
                // A missing dst is a zero IPNet, which Go prints as "<nil>".
                dst: dst.map(|c| c.net()),
                gw,
            });
        }
        Ok(out)
    }

    fn ipam(&mut self, v: &Value) -> Hard<Option<RawIpam>> {
        let obj = match v {
            Value::Null => return Ok(None),
            Value::Object(o) => o,
            other => {
                self.save(other, "Net", "ipam", "allocator.IPAMConfig");
                return Ok(None);
            }
        };
        const S: &str = "IPAMConfig";
        const FIELDS: &[&str] = &[
            "Name",
            "type",
            "routes",
            "dataDir",
            "resolvConf",
            "ranges",
            "rangeStart",
            "rangeEnd",
            "subnet",
            "gateway",
        ];
        let mut ipam = RawIpam::default();
        for (k, v) in obj {
            let Some(f) = field_of(k, FIELDS) else {
                continue;
            };
            let p = format!("ipam.{f}");
            match f {
                "Name" => {
                    self.string(v, S, &p);
                }
                "type" => ipam.ipam_type = self.string(v, S, &p),
                "routes" => ipam.routes = self.routes(v)?,
                "dataDir" => ipam.data_dir = self.string(v, S, &p),
                "resolvConf" => ipam.resolv_conf = self.string(v, S, &p),
                "ranges" => ipam.ranges = self.range_sets(v, S, &p)?,
                _ => {
                    let mut one = Map::new();
                    one.insert(f.to_string(), v.clone());
                    let mut legacy = std::mem::take(&mut ipam.legacy);
                    self.range_fields(&one, S, "ipam", &mut legacy)?;
                    ipam.legacy = legacy;
                }
            }
        }
        Ok(Some(ipam))
    }

    fn runtime_config(&mut self, v: &Value, net: &mut RawNet) -> Hard<()> {
        let obj = match v {
            Value::Null => return Ok(()),
            Value::Object(o) => o,
            other => {
                self.save(
                    other,
                    "Net",
                    "runtimeConfig",
                    "struct { IPRanges []allocator.RangeSet \"json:\\\"ipRanges,omitempty\\\"\"; IPs []*ip.IP \"json:\\\"ips,omitempty\\\"\" }",
                );
                return Ok(());
            }
        };
        for (k, v) in obj {
            match field_of(k, &["ipRanges", "ips"]) {
                Some("ipRanges") => {
                    net.ip_ranges = self.range_sets(v, "", "runtimeConfig.ipRanges")?
                }
                Some(_) => net.rc_ips = self.ip_list(v, "", "runtimeConfig.ips")?,
                None => {}
            }
        }
        Ok(())
    }

    fn args(&mut self, v: &Value, net: &mut RawNet) -> Hard<()> {
        let obj = match v {
            Value::Null => return Ok(()),
            Value::Object(o) => o,
            other => {
                self.save(
                    other,
                    "Net",
                    "args",
                    "struct { A *allocator.IPAMArgs \"json:\\\"cni\\\"\" }",
                );
                return Ok(());
            }
        };
        for (k, v) in obj {
            if field_of(k, &["cni"]).is_none() {
                continue;
            }
            let cni = match v {
                Value::Null => continue,
                Value::Object(o) => o,
                other => {
                    self.save(other, "", "args.cni", "allocator.IPAMArgs");
                    continue;
                }
            };
            for (k2, v2) in cni {
                if field_of(k2, &["ips"]).is_some() {
                    net.args_ips = self.ip_list(v2, "IPAMArgs", "args.cni.ips")?;
                }
            }
        }
        Ok(())
    }

    fn net(&mut self, conf: &Value) -> Hard<RawNet> {
        let obj = match conf {
            Value::Object(o) => o,
            Value::Null => return Ok(RawNet::default()),
            other => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go value of type allocator.Net",
                    kind(other)
                ));
            }
        };
        let mut net = RawNet::default();
        const FIELDS: &[&str] = &["name", "cniVersion", "ipam", "runtimeConfig", "args"];
        for (k, v) in obj {
            match field_of(k, FIELDS) {
                Some("name") => net.name = self.string(v, "Net", "name"),
                Some("cniVersion") => net.cni_version = self.string(v, "Net", "cniVersion"),
                Some("ipam") => net.ipam = self.ipam(v)?,
                Some("runtimeConfig") => self.runtime_config(v, &mut net)?,
                Some("args") => self.args(v, &mut net)?,
                _ => {}
            }
        }
        Ok(net)
    }
}
