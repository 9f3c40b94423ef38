//! The command language, defined once. This clap tree drives parsing, `help`, `help
//! COMMAND`, suggestions and (in the REPL) completion. Aliases follow kubectl.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// One line of the lab's language.
#[derive(Debug, Parser, Clone, PartialEq)]
#[command(
    multicall = true,
    disable_help_flag = false,
    help_template = "{all-args}",
    subcommand_help_heading = "Commands"
)]
pub struct CommandLine {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Every command.
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum Command {
    /// Add or list nodes
    #[command(subcommand, visible_alias = "no", visible_alias = "nodes")]
    Node(NodeCmd),
    /// Create, delete or list pods (the kubelet and the runtime do the rest)
    #[command(subcommand, visible_alias = "po", visible_alias = "pods")]
    Pod(PodCmd),
    /// Call the CNI chain directly, as a container runtime would
    #[command(subcommand)]
    Cni(CniCmd),
    /// Create, delete or list NetworkPolicies
    #[command(subcommand, visible_alias = "netpol")]
    Policy(PolicyCmd),
    /// Would traffic from SRC reach DST? Answers allowed or denied and which policy decided
    #[command(after_help = "Examples:\n  reach web db --port 3306\n  reach web db --port 53/UDP")]
    Reach(FlowArgs),
    /// Follow a packet hop by hop: eth0 → veth → cni0 → route → node → …
    #[command(after_help = "Examples:\n  trace app-a app-b\n  trace web db --port 3306")]
    Trace(FlowArgs),
    /// Views: IPAM store, routes, events (call log), wire log
    #[command(subcommand)]
    Show(ShowCmd),
    /// Print objects (kubectl get)
    #[command(
        after_help = "Kinds: nodes (no), pods (po), namespaces (ns), networkpolicies (netpol)\nExamples:\n  get pods\n  get pod web -o json\n  get nodes -o wide"
    )]
    Get(GetArgs),
    /// Describe an object with its events (kubectl describe)
    Describe(DescribeArgs),
    /// Advance the logical clock (seconds); retries whose backoff expired run
    #[command(after_help = "Examples:\n  tick\n  tick 10")]
    Tick {
        /// Seconds to advance
        #[arg(default_value_t = 1)]
        seconds: u64,
    },
    /// auto: control loops run after every command; step: nothing acts until `reconcile`
    Mode {
        /// auto or step
        #[arg(value_enum)]
        mode: ModeArg,
    },
    /// Run the control loops now (in step mode, one pass)
    Reconcile,
    /// Start over with the default cluster
    Reset(ResetArgs),
    /// Print text (useful in scripts)
    Echo(EchoArgs),
    /// Guided lessons: list, start, play, verify, lint
    #[command(
        subcommand,
        after_help = "Examples:\n  lesson list\n  lesson start ch7-hands-on\n  lesson play ch7-hands-on --speed 2\n  lesson verify"
    )]
    Lesson(LessonCmd),
    /// Lesson: the next hint for the current step (repeat for more)
    Hint,
    /// Lesson: let the lab do the current step (or show a quiz's answer) and move on
    Skip,
    /// Lesson: back to the previous step (the cluster is rebuilt as it was then)
    Back,
}

/// `node …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum NodeCmd {
    /// Register a node with its podCIDR and InternalIP
    #[command(
        after_help = "Examples:\n  node add node-3 --cidr 10.244.3.0/24 --ip 192.168.0.3\n  node add edge --cidr 10.250.0.0/28 --ip 192.168.0.9 --zone zone-2"
    )]
    Add {
        /// Node name
        name: String,
        /// The node's podCIDR (default: the next free 10.244.N.0/24)
        #[arg(long)]
        cidr: Option<String>,
        /// The node's InternalIP (default: 192.168.0.N)
        #[arg(long)]
        ip: Option<String>,
        /// topology.kubernetes.io/zone label
        #[arg(long)]
        zone: Option<String>,
    },
    /// List nodes
    #[command(visible_alias = "ls")]
    List,
}

/// `pod …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum PodCmd {
    /// Create a pod bound to a node; the kubelet creates its sandbox and network
    #[command(
        after_help = "Examples:\n  pod create web --node node-1 --label app=web\n  pod create api --node node-2 --port 8080:80\n  pod create slow --node node-1 --bandwidth-ingress 1M --bandwidth-egress 1M"
    )]
    Create(PodCreateArgs),
    /// Delete a pod; the kubelet tears it down (CNI DEL) before it is gone
    #[command(visible_alias = "rm")]
    Delete {
        /// Pod name
        name: String,
        /// Namespace
        #[arg(
            long,
            short = 'n',
            visible_alias = "namespace",
            default_value = "default"
        )]
        ns: String,
    },
    /// List pods
    #[command(visible_alias = "ls")]
    List {
        /// Namespace (all namespaces when omitted)
        #[arg(long, short = 'n', visible_alias = "namespace")]
        ns: Option<String>,
    },
}

/// `pod create` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct PodCreateArgs {
    /// Pod name
    pub name: String,
    /// The node to run on
    #[arg(long)]
    pub node: String,
    /// Label k=v (repeatable)
    #[arg(long = "label", short = 'l')]
    pub labels: Vec<String>,
    /// Host port mapping HOST:CONTAINER[/PROTO] (repeatable)
    #[arg(long = "port", short = 'p')]
    pub ports: Vec<String>,
    /// Ingress bandwidth limit (kubernetes.io/ingress-bandwidth), e.g. 10M
    #[arg(long)]
    pub bandwidth_ingress: Option<String>,
    /// Egress bandwidth limit (kubernetes.io/egress-bandwidth), e.g. 10M
    #[arg(long)]
    pub bandwidth_egress: Option<String>,
    /// A PersistentVolumeClaim to mount, CLAIM[:ro] (repeatable)
    #[arg(long = "pvc")]
    pub pvcs: Vec<String>,
    /// Namespace
    #[arg(
        long,
        short = 'n',
        visible_alias = "namespace",
        default_value = "default"
    )]
    pub ns: String,
}

/// `cni …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum CniCmd {
    /// ADD: run the chain for a container (prints the result JSON or the CNI error JSON)
    #[command(
        after_help = "Examples:\n  cni add c1 --node node-1\n  cni add c2 --node node-1 --args IP=10.244.1.50\n  cni add c3 --node node-1 --ifname net1"
    )]
    Add(CniAttachArgs),
    /// DEL: run the chain in reverse with the cached result (prints nothing on success)
    Del(CniAttachArgs),
    /// CHECK: verify an attachment against its cached result
    Check(CniAttachArgs),
    /// GC: delete cached attachments of containers that no longer exist, then GC each plugin
    Gc {
        /// Node
        #[arg(long)]
        node: String,
    },
    /// STATUS: can the plugins serve ADD?
    Status {
        /// Node
        #[arg(long)]
        node: String,
    },
    /// VERSION of each plugin in the chain
    Version {
        /// Node (default: the first node)
        #[arg(long)]
        node: Option<String>,
    },
    /// Show or load network configs in /etc/cni/net.d
    #[command(subcommand)]
    Conf(CniConfCmd),
}

/// Arguments naming one attachment.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct CniAttachArgs {
    /// Container ID (CNI_CONTAINERID)
    pub container: String,
    /// Node whose plugins run
    #[arg(long)]
    pub node: String,
    /// CNI_IFNAME
    #[arg(long, default_value = "eth0")]
    pub ifname: String,
    /// CNI_NETNS (default: a namespace the lab creates for the container)
    #[arg(long)]
    pub netns: Option<String>,
    /// CNI_ARGS, K=V;K2=V2
    #[arg(long)]
    pub args: Option<String>,
}

/// `cni conf …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum CniConfCmd {
    /// Show /etc/cni/net.d and the config the runtime uses (first in lexical order)
    Show {
        /// Node (default: the first node)
        #[arg(long)]
        node: Option<String>,
    },
    /// Copy a conflist file into /etc/cni/net.d ({{.PodCIDR}} is filled per node)
    Load {
        /// The file (.conflist, .conf or .json)
        file: String,
        /// Only this node
        #[arg(long, conflicts_with = "all")]
        node: Option<String>,
        /// Every node (the default)
        #[arg(long)]
        all: bool,
        /// Name in net.d (default: the file's name)
        #[arg(long = "as")]
        as_name: Option<String>,
    },
}

/// `policy …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum PolicyCmd {
    /// Create a NetworkPolicy
    #[command(
        after_help = "Examples:\n  policy create db-allow-web --select app=db --ingress-from app=web --port 3306\n  policy create deny-all --select '' --types Ingress"
    )]
    Create(PolicyCreateArgs),
    /// Delete a NetworkPolicy
    #[command(visible_alias = "rm")]
    Delete {
        /// Policy name
        name: String,
        /// Namespace
        #[arg(
            long,
            short = 'n',
            visible_alias = "namespace",
            default_value = "default"
        )]
        ns: String,
    },
    /// List NetworkPolicies
    #[command(visible_alias = "ls")]
    List,
}

/// `policy create` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct PolicyCreateArgs {
    /// Policy name
    pub name: String,
    /// podSelector k=v[,k2=v2] ('' selects every pod in the namespace)
    #[arg(long)]
    pub select: String,
    /// An ingress peer: pods matching k=v[,k2=v2] (repeatable); `ns:k=v` for a namespaceSelector
    #[arg(long = "ingress-from")]
    pub ingress_from: Vec<String>,
    /// An egress peer: pods matching k=v (repeatable); `ns:k=v` for a namespaceSelector
    #[arg(long = "egress-to")]
    pub egress_to: Vec<String>,
    /// Allowed port P[/PROTO] or P-END[/PROTO] (repeatable; applies to every rule)
    #[arg(long = "port")]
    pub ports: Vec<String>,
    /// policyTypes, e.g. Ingress,Egress (default: Ingress, plus Egress if --egress-to is given)
    #[arg(long)]
    pub types: Option<String>,
    /// Namespace
    #[arg(
        long,
        short = 'n',
        visible_alias = "namespace",
        default_value = "default"
    )]
    pub ns: String,
}

/// `reach` / `trace` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct FlowArgs {
    /// Source pod (ns/name or name)
    pub src: String,
    /// Destination pod, node or IP
    pub dst: String,
    /// Destination port P[/PROTO] (default 80/TCP)
    #[arg(long)]
    pub port: Option<String>,
}

/// `show …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum ShowCmd {
    /// host-local's store on a node, as it sits in /var/lib/cni/networks
    Ipam {
        /// Node (default: every node)
        node: Option<String>,
    },
    /// Route tables in `ip route` form (node and pod namespaces)
    Routes {
        /// Node (default: every node)
        node: Option<String>,
    },
    /// The call log: who called what, in order
    Events {
        /// How many of the latest entries
        #[arg(short = 'n', long, default_value_t = 20)]
        n: usize,
    },
    /// The wire log: exact CNI env, stdin and stdout of each plugin execution
    Wire {
        /// Show the N-th record (as numbered in the list); the latest when omitted
        n: Option<u64>,
        /// List the latest records instead of showing one
        #[arg(long)]
        list: bool,
    },
    /// iptables nat rules on a node (portmap, ipMasq)
    Iptables {
        /// Node
        node: String,
    },
    /// Watch events of the API server since an index
    Watch {
        /// First event index
        #[arg(long, default_value_t = 0)]
        since: u64,
    },
}

/// Output formats for `get`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// More columns
    Wide,
    /// The object(s) as JSON
    Json,
}

/// `get` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct GetArgs {
    /// Kind (nodes, pods, namespaces, networkpolicies…)
    pub kind: String,
    /// Name (all when omitted)
    pub name: Option<String>,
    /// Output format
    #[arg(short = 'o', long = "output", value_enum)]
    pub output: Option<OutputFormat>,
    /// Namespace
    #[arg(long, short = 'n', visible_alias = "namespace")]
    pub ns: Option<String>,
}

/// `describe` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct DescribeArgs {
    /// Kind
    pub kind: String,
    /// Name
    pub name: String,
    /// Namespace
    #[arg(
        long,
        short = 'n',
        visible_alias = "namespace",
        default_value = "default"
    )]
    pub ns: String,
}

/// `mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Reconcile after every command
    Auto,
    /// Only on `reconcile`
    Step,
}

/// `reset` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct ResetArgs {
    /// Start with no nodes at all
    #[arg(long)]
    pub empty: bool,
}

/// `echo` arguments.
#[derive(Debug, Args, Clone, PartialEq)]
pub struct EchoArgs {
    /// Words to print
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub words: Vec<String>,
}

/// `lesson …`
#[derive(Debug, Subcommand, Clone, PartialEq)]
pub enum LessonCmd {
    /// List the lessons with your progress
    #[command(visible_alias = "ls")]
    List,
    /// Start (or resume) a lesson on a fresh cluster
    Start {
        /// Lesson id (see `lesson list`)
        id: String,
    },
    /// Show the current step again, with your progress
    Status,
    /// Answer the current quiz: a letter, or your prediction
    Answer {
        /// The answer
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
    /// Try the current step again: the cluster is rebuilt as it was when the step began
    Retry,
    /// Start the current lesson over from step 1 on a fresh cluster (clears its progress)
    Reset,
    /// Leave the lesson (progress is kept)
    Stop,
    /// Play a lesson's steps as a demo: text, then each reference command and its output
    Play {
        /// Lesson id
        id: String,
        /// Playback speed (2 = twice as fast; front ends that animate use it)
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
        /// Wait for a key between steps (front ends that animate use it)
        #[arg(long)]
        step: bool,
    },
    /// Play every step on a fresh cluster and check every check (all lessons, or one)
    Verify {
        /// Lesson id (all when omitted)
        id: Option<String>,
    },
    /// Check the lesson files: format, sections, hints, commands, and that each check is
    /// false before its step and true after
    Lint,
}
