//! The catalog tools from the command line, for any MCP server — a command
//! spoken to over stdio or an `http://` URL, written with `mcp-core` or not:
//! its lock diff, its profile report and its token counts.
//!
//! ```sh
//! cargo run --example catalog --features catalog -- --tokens --profile openai-strict -- target/debug/examples/demo
//! cargo run --example catalog --features catalog -- --lock examples/locks/demo.lock.json -- target/debug/examples/demo
//! cargo run --example catalog --features catalog -- --lock demo.lock.json --update -- http://127.0.0.1:8080/mcp
//! ```
//!
//! Options (before `--`; everything after it is the target):
//! - `--lock FILE`: compare with a catalog lockfile (every change,
//!   breaking first); `--update` writes it instead. Exit 1 on drift.
//! - `--profile NAME` (repeatable) or `--all-profiles`: `openai-strict`,
//!   `gemini`, `anthropic`, `mcp`, `cursor`, `vscode`. Exit 1 on any issue.
//! - `--strict`: print the OpenAI strict rewrite of every tool's schema,
//!   and check the rewrite against the `openai-strict` profile (exit 1 on
//!   any issue left).
//! - `--tokens`: the listing's cost per tool (o200k_base); `--budget N`
//!   exits 1 past N tokens.
//! - `--revisions R1,R2`: the protocol revisions to read (default
//!   `2025-11-25,2026-07-28`; one the server refuses is skipped, with a note).

use std::path::PathBuf;
use std::process::ExitCode;

use mcp_core::catalog::profile::{self, strict, Profile};
use mcp_core::catalog::tokens::TokenReport;
use mcp_core::catalog::{lock, Catalog, DEFAULT_REVISIONS};
use mcp_core::client::{Client, ClientBuilder, ClientError, Protocol};

#[derive(Default)]
struct Args {
    lock: Option<PathBuf>,
    update: bool,
    profiles: Vec<Profile>,
    strict: bool,
    tokens: bool,
    budget: Option<usize>,
    revisions: Vec<String>,
    target: Vec<String>,
}

fn parse() -> Result<Args, String> {
    let mut args = Args::default();
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--lock" => args.lock = Some(PathBuf::from(value("--lock")?)),
            "--update" => args.update = true,
            "--profile" => {
                let name = value("--profile")?;
                args.profiles
                    .push(Profile::from_name(&name).ok_or(format!("unknown profile {name:?}"))?);
            }
            "--all-profiles" => args.profiles = profile::ALL.to_vec(),
            "--strict" => args.strict = true,
            "--tokens" => args.tokens = true,
            "--budget" => {
                let n = value("--budget")?;
                args.budget = Some(
                    n.parse()
                        .map_err(|_| format!("--budget {n:?} is not a number"))?,
                );
                args.tokens = true;
            }
            "--revisions" => {
                args.revisions = value("--revisions")?
                    .split(',')
                    .map(str::to_owned)
                    .collect()
            }
            "--" => {
                args.target = it.collect();
                break;
            }
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    if args.target.is_empty() {
        return Err("no target: put the server's command or URL after `--`".into());
    }
    if args.revisions.is_empty() {
        args.revisions = DEFAULT_REVISIONS.iter().map(|r| (*r).to_owned()).collect();
    }
    Ok(args)
}

async fn connect(target: &[String], revision: &str) -> Result<Client, ClientError> {
    let builder = ClientBuilder::new("mcp-core-catalog", env!("CARGO_PKG_VERSION"))
        .protocol(Protocol::pinned(revision));
    match target {
        [url] if url.starts_with("http://") || url.starts_with("https://") => {
            builder.connect_http(url).await
        }
        [program, args @ ..] => {
            let mut command = tokio::process::Command::new(program);
            command.args(args);
            builder.connect_stdio(command).await
        }
        [] => unreachable!("parse() refuses an empty target"),
    }
}

async fn run(args: Args) -> Result<bool, String> {
    let mut catalog = Catalog::default();
    let mut server_name = String::new();
    for revision in &args.revisions {
        let client = match connect(&args.target, revision).await {
            Ok(client) => client,
            Err(e) => {
                eprintln!("note: skipping {revision}: {e}");
                continue;
            }
        };
        if let Some(name) = client
            .server_info()
            .and_then(|i| i.get("name"))
            .and_then(|n| n.as_str())
        {
            server_name = name.to_owned();
        }
        let surface = Catalog::collect(&client).await;
        client.close().await;
        catalog.revisions.insert(
            revision.clone(),
            surface.map_err(|e| format!("{revision}: {e}"))?,
        );
    }
    let tools = catalog
        .latest()
        .ok_or("the server answered no revision")?
        .tool_list();
    let mut ok = true;

    if let Some(path) = &args.lock {
        println!("== lock {}", path.display());
        if args.update {
            std::fs::write(path, lock::render(&catalog))
                .map_err(|e| format!("{}: {e}", path.display()))?;
            println!(
                "written ({} revision(s), {} tool(s))",
                catalog.revisions.len(),
                tools.len()
            );
        } else {
            match lock::check(&catalog, path) {
                lock::Verdict::Matches => println!("matches"),
                lock::Verdict::Missing => {
                    println!("missing: run again with --update to write it");
                    ok = false;
                }
                lock::Verdict::Unreadable(e) => {
                    println!("unreadable: {e}");
                    ok = false;
                }
                lock::Verdict::Drifted(changes) => {
                    print!("{}", lock::report(&changes));
                    if changes.is_empty() {
                        println!("(only the form of the JSON differs; --update rewrites it)");
                    }
                    ok = false;
                }
            }
        }
    }
    for profile in &args.profiles {
        let issues = profile.check(&tools, &server_name);
        println!("== profile {}: {} issue(s)", profile.name(), issues.len());
        for issue in &issues {
            println!("{issue}");
        }
        ok &= issues.is_empty();
    }
    if args.strict {
        println!("== OpenAI strict rewrite");
        let mut rewritten = Vec::new();
        for tool in &tools {
            let name = tool.get("name").and_then(|n| n.as_str()).unwrap_or("");
            match tool.get("inputSchema").map(strict::rewrite) {
                Some(Ok(s)) => {
                    println!("{name}: {}", s.schema);
                    let mut tool = tool.clone();
                    tool["inputSchema"] = s.schema;
                    rewritten.push(tool);
                }
                Some(Err(problems)) => {
                    println!("{name}: no faithful rewrite: {}", problems.join("; "))
                }
                None => println!("{name}: no input schema"),
            }
        }
        // The rewrite must satisfy the profile it is for.
        let left = Profile::OpenAiStrict.check(&rewritten, &server_name);
        println!(
            "{} of {} tool(s) rewritten; {} openai-strict issue(s) left in the rewrite",
            rewritten.len(),
            tools.len(),
            left.len()
        );
        for issue in &left {
            println!("{issue}");
        }
        ok &= left.is_empty();
    }
    if args.tokens {
        let report = TokenReport::of(&tools);
        println!("== tokens\n{report}");
        if let Some(budget) = args.budget {
            if let Err(message) = report.within(budget) {
                print!("{message}");
                ok = false;
            }
        }
    }
    Ok(ok)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("catalog: {e}\n(see the doc comment of examples/catalog.rs for usage)");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("catalog: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(args)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("catalog: {e}");
            ExitCode::from(2)
        }
    }
}
