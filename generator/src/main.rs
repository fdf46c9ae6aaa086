//! `armgen`: regenerate the generated crate, or check that it is up to date.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use armgen::{Builder, Generation, Stale};
use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "armgen",
    version,
    about = "Generates Rust types for Azure ARM APIs from their OpenAPI specs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone)]
struct Common {
    /// The generator configuration.
    #[arg(long, default_value = "azure-arm.yaml")]
    config: PathBuf,
    /// The spec root (a checkout of azure-rest-api-specs). Default: $AZURE_REST_API_SPECS, then
    /// specs/azure-rest-api-specs next to the config file.
    #[arg(long)]
    specs: Option<PathBuf>,
    /// The generated crate's folder.
    #[arg(long, default_value = "generated")]
    out: PathBuf,
}

#[derive(Subcommand)]
enum Command {
    /// Generate the crate into --out and print a summary.
    Generate(Common),
    /// Exit non-zero, listing the stale files, when --out differs from what `generate` would write.
    Check(Common),
    /// Like `check`, and print a unified diff of every stale file.
    Diff(Common),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn build(common: &Common) -> armgen::Result<Generation> {
    let mut builder = Builder::new(&common.config);
    if let Some(specs) = &common.specs {
        builder = builder.specs(specs);
    }
    builder.generate()
}

fn run(command: Command) -> armgen::Result<ExitCode> {
    let start = Instant::now();
    match command {
        Command::Generate(common) => {
            let generation = build(&common)?;
            let t = Instant::now();
            let (written, removed) = generation.write(&common.out)?;
            let write_time = t.elapsed();
            summary(&generation);
            println!("timings:");
            for (stage, d) in &generation.timings.stages {
                println!("  {stage:<10} {:>8.1} ms", d.as_secs_f64() * 1000.0);
            }
            println!("  {:<10} {:>8.1} ms", "write", write_time.as_secs_f64() * 1000.0);
            println!(
                "{} files ({} Rust lines) in {}: {} written, {} removed, {} unchanged; {:.2} s in all",
                generation.files.len(),
                generation.rust_lines(),
                common.out.display(),
                written.len(),
                removed.len(),
                generation.files.len() - written.len(),
                start.elapsed().as_secs_f64()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Check(common) => check(&common, false),
        Command::Diff(common) => check(&common, true),
    }
}

fn check(common: &Common, diff: bool) -> armgen::Result<ExitCode> {
    {
        {
            let generation = build(common)?;
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
    }
}

fn summary(generation: &Generation) {
    println!("spec root: {}", generation.spec_root.display());
    for v in &generation.versions {
        println!(
            "{}/{} (ARM {}): {} resources ({}), {} types, {} diagnostics (see REPORT.md)",
            v.group,
            v.kube_version,
            v.api_version,
            v.resources.len(),
            v.resources.join(", "),
            v.types,
            v.diagnostics
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
