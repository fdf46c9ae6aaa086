//! `armgen`: regenerate the generated crate, check that it is up to date, or report API changes between
//! two versions.
//!
//! Exit codes: 0 success (`check`: up to date; `diff`: report printed), 1 `check` found stale files (or
//! `diff --exit-code` found API changes), 2 error (including a bad command line).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use armgen::pipeline::buildrs::Progress;
use armgen::report::apidiff::{self, Operand};
use armgen::ui::{self, Style};
use armgen::{Builder, Generation, Stale};
use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "armgen",
    version,
    about = "Generates Rust types for Azure ARM APIs from their OpenAPI specs",
    after_help = "Exit codes: 0 success; 1 `check` found stale files (or `diff --exit-code` found API changes); \
                  2 error."
)]
struct Cli {
    /// Print the spec root, resources, the time of every pass and the files written; progress on stderr.
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Common {
    /// The generator configuration.
    #[arg(long, default_value = "azure-arm.yaml")]
    config: PathBuf,
    /// The spec root (a checkout of azure-rest-api-specs). Default: $AZURE_REST_API_SPECS, then
    /// specs/azure-rest-api-specs next to the config file, fetched there from specs/pin.json when missing.
    #[arg(long)]
    specs: Option<PathBuf>,
    /// Where missing spec files are fetched from: <URL>/<commit>/<path>. Default: $ARMGEN_SPEC_BASE_URL, then
    /// https://raw.githubusercontent.com/Azure/azure-rest-api-specs.
    #[arg(long, value_name = "URL")]
    spec_base_url: Option<String>,
    /// The generated crate's folder.
    #[arg(long, default_value = "generated")]
    out: PathBuf,
}

#[derive(Args, Clone)]
struct CheckArgs {
    #[command(flatten)]
    common: Common,
    /// Also print a unified diff of every stale file.
    #[arg(long)]
    diff: bool,
}

#[derive(Args, Clone)]
struct DiffArgs {
    /// The old side: a Kubernetes version of the configuration (`v1beta1` or `containerservice/v1beta1`),
    /// a spec file (JSON), an API structure file (`generated/api/*.txt`) or a generated tree (a folder).
    old: String,
    /// The new side, as OLD.
    new: String,
    /// The generator configuration (for versions).
    #[arg(long, default_value = "azure-arm.yaml")]
    config: PathBuf,
    /// The spec root (for versions, and for spec files under it).
    #[arg(long)]
    specs: Option<PathBuf>,
    /// Where missing spec files are fetched from (for versions), as for `generate`.
    #[arg(long, value_name = "URL")]
    spec_base_url: Option<String>,
    /// Exit with 1 when there are API changes (as `git diff --exit-code`).
    #[arg(long)]
    exit_code: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Generate the crate into --out and print a summary.
    Generate(Common),
    /// Exit with 1, listing the stale files, when --out differs from what `generate` would write.
    Check(CheckArgs),
    /// Print a Markdown report of the API changes between two versions, spec files or generated trees.
    Diff(DiffArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command, cli.verbose) {
        Ok(code) => code,
        Err(e) => {
            eprintln!(
                "{}",
                ui::render_error(
                    &e,
                    Style {
                        color: ui::stderr_color()
                    }
                )
            );
            ExitCode::from(2)
        }
    }
}

/// Progress on stderr: one line per step with `--verbose`; otherwise a status line that is overwritten and
/// cleared, only on a terminal.
struct ProgressOutput {
    verbose: bool,
    transient: bool,
    used: Arc<Mutex<bool>>,
}

impl ProgressOutput {
    fn new(verbose: bool) -> Self {
        ProgressOutput {
            verbose,
            transient: !verbose && std::io::IsTerminal::is_terminal(&std::io::stderr()),
            used: Arc::new(Mutex::new(false)),
        }
    }

    fn attach(&self, builder: Builder) -> Builder {
        let (verbose, transient, used) = (self.verbose, self.transient, self.used.clone());
        let total = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let start = Instant::now();
        builder.progress(move |p| {
            let line = match p {
                Progress::Start { versions } => {
                    total.store(versions.len(), Ordering::Relaxed);
                    return;
                }
                Progress::Version { name, api_version } => {
                    let i = done.fetch_add(1, Ordering::Relaxed) + 1;
                    format!(
                        "[{i}/{}] {name} (ARM {api_version}): load, lower, passes",
                        total.load(Ordering::Relaxed)
                    )
                }
                Progress::Emit => "emit Rust".to_string(),
                // Downloads get a line of their own, always.
                Progress::Fetch { .. } if !verbose => {
                    if transient {
                        eprint!("\r\x1b[2K");
                    }
                    eprintln!("{p}");
                    return;
                }
                Progress::Fetch { .. } => p.to_string(),
            };
            if !verbose && !transient {
                return;
            }
            if verbose {
                eprintln!("{:>7.3} s  {line}", start.elapsed().as_secs_f64());
            } else {
                eprint!("\r\x1b[2Karmgen: {line}…");
                if let Ok(mut u) = used.lock() {
                    *u = true;
                }
            }
        })
    }

    fn clear(&self) {
        if self.used.lock().map(|u| *u).unwrap_or(false) {
            eprint!("\r\x1b[2K");
        }
    }
}

fn builder(common: &Common) -> Builder {
    let mut builder = Builder::new(&common.config).fetch_missing_specs(true);
    if let Some(specs) = &common.specs {
        builder = builder.specs(specs);
    }
    if let Some(url) = &common.spec_base_url {
        builder = builder.spec_base_url(url);
    }
    builder
}

fn build(common: &Common, verbose: bool) -> armgen::Result<Generation> {
    let progress = ProgressOutput::new(verbose);
    let result = progress.attach(builder(common)).generate();
    progress.clear();
    result
}

fn ms(d: Duration) -> String {
    format!("{:>8.1} ms", d.as_secs_f64() * 1000.0)
}

fn run(command: Command, verbose: bool) -> armgen::Result<ExitCode> {
    let start = Instant::now();
    match command {
        Command::Generate(common) => {
            let generation = build(&common, verbose)?;
            let t = Instant::now();
            let (written, removed) = generation.write(&common.out)?;
            let write_time = t.elapsed();
            summary(&generation, verbose);
            if verbose {
                println!("timings:");
                for (stage, d) in &generation.timings.stages {
                    println!("  {stage:<10} {}", ms(*d));
                }
                println!("  {:<10} {}", "write", ms(write_time));
                println!("  {:<10} {}", "total", ms(start.elapsed()));
                for p in &written {
                    println!("written: {}", p.display());
                }
                for p in &removed {
                    println!("removed: {}", p.display());
                }
            }
            println!(
                "{}: {} files ({} Rust lines), {} written, {} removed, {} unchanged in {:.2} s",
                common.out.display(),
                generation.files.len(),
                generation.rust_lines(),
                written.len(),
                removed.len(),
                generation.files.len() - written.len(),
                start.elapsed().as_secs_f64()
            );
            warnings(&generation);
            Ok(ExitCode::SUCCESS)
        }
        Command::Check(args) => check(&args.common, args.diff, verbose),
        Command::Diff(args) => api_diff(&args, verbose),
    }
}

fn check(common: &Common, diff: bool, verbose: bool) -> armgen::Result<ExitCode> {
    let generation = build(common, verbose)?;
    warnings(&generation);
    let stale = generation.check(&common.out)?;
    if stale.is_empty() {
        println!(
            "{}: up to date ({} files)",
            common.out.display(),
            generation.files.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!(
        "{}: {} stale file(s); run `cargo run -p armgen -- generate`:",
        common.out.display(),
        stale.len()
    );
    for s in &stale {
        eprintln!("  {s}");
        if diff {
            print_diff(&generation, &common.out, s);
        }
    }
    Ok(ExitCode::FAILURE)
}

fn api_diff(args: &DiffArgs, verbose: bool) -> armgen::Result<ExitCode> {
    let operands = [Operand::parse(&args.old), Operand::parse(&args.new)];
    // Versions of the configuration need a generation (once for both sides); paths do not.
    let generation = if operands.iter().any(|o| matches!(o, Operand::Version(_))) {
        let common = Common {
            config: args.config.clone(),
            specs: args.specs.clone(),
            spec_base_url: args.spec_base_url.clone(),
            out: PathBuf::new(),
        };
        Some(build(&common, verbose)?)
    } else {
        None
    };
    let spec_root = args.specs.clone().or_else(|| {
        let base = args.config.parent().map(PathBuf::from).unwrap_or_default();
        armgen::resolve_spec_root(None, &base).ok()
    });
    let mut sides = Vec::new();
    for operand in &operands {
        sides.push(match (operand, &generation) {
            (Operand::Path(p), _) => apidiff::from_path(p, spec_root.as_deref())?,
            (Operand::Version(v), Some(g)) => vec![apidiff::from_generation(g, v)?],
            (Operand::Version(v), None) => {
                return Err(armgen::Error::Invalid {
                    what: format!("`{v}`"),
                    message: "not a file, folder or version".into(),
                });
            }
        });
    }
    let diffs = apidiff::compare(&sides[0], &sides[1]);
    print!("{}", apidiff::markdown(&diffs));
    let changed = diffs.iter().any(|d| !d.is_empty());
    Ok(if args.exit_code && changed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What a user must know about the output, on stderr: what was given up to fit a CRD into its size budget (not
/// only a comment in the file).
fn warnings(generation: &Generation) {
    let style = Style {
        color: ui::stderr_color(),
    };
    for f in &generation.fitted {
        eprintln!("{}: {f}", style.warning_label());
    }
}

fn summary(generation: &Generation, verbose: bool) {
    if verbose {
        println!("spec root: {}", generation.spec_root.display());
    }
    for v in &generation.versions {
        let resources = if verbose {
            format!(" ({})", v.resources.join(", "))
        } else {
            String::new()
        };
        println!(
            "{}/{} (ARM {}): {} resources{resources}, {} types, {} diagnostics",
            v.group,
            v.kube_version,
            v.api_version,
            v.resources.len(),
            v.types,
            v.diagnostics
        );
    }
    // The CRD budget (docs/config.md, "Served versions"): how close the largest manifest is.
    let crds = generation
        .files
        .iter()
        .filter(|(p, _)| p.starts_with("crds") && !p.ends_with("kustomization.yaml"));
    if let Some((path, text)) = crds.clone().max_by_key(|(_, t)| t.len()) {
        let budget = armgen::emit::crd::MAX_CRD_BYTES;
        println!(
            "crds: {} manifests, the largest {} at {} bytes, {}% of the {budget}-byte budget",
            crds.count(),
            path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(),
            text.len(),
            text.len() * 100 / budget
        );
    }
}

fn print_diff(generation: &Generation, out: &std::path::Path, stale: &Stale) {
    let (path, old, new) = match stale {
        Stale::Missing(p) => (p, String::new(), generation.files.get(p).cloned().unwrap_or_default()),
        Stale::Modified(p) => (
            p,
            std::fs::read_to_string(out.join(p)).unwrap_or_default(),
            generation.files.get(p).cloned().unwrap_or_default(),
        ),
        Stale::Extra(p) => (
            p,
            std::fs::read_to_string(out.join(p)).unwrap_or_default(),
            String::new(),
        ),
    };
    let name = path.display().to_string();
    let diff = similar::TextDiff::from_lines(&old, &new);
    print!(
        "{}",
        diff.unified_diff()
            .context_radius(3)
            .header(&format!("a/{name}"), &format!("b/{name}"))
    );
}
