//! `intercom-pane doctor [--json]`: exit 0 when every needed part is in place, 1 when a check
//! failed (each failure names a fix).

use crate::cli::DoctorArgs;
use crate::cmd::exit::DoctorExit;
use crate::cmd::options;
use crate::doctor::{self, Check, Report};

pub(crate) fn run(args: &DoctorArgs) -> DoctorExit {
    let report = match options::resolve(&args.src) {
        Ok(r) => doctor::run(&r.opts, r.clock.as_ref()),
        Err(e) => Report {
            checks: vec![Check::fail(
                "config",
                e.to_string(),
                "give --config a JSON file naming an existing, absolute dataRoot folder, or leave --config out",
            )],
        },
    };
    if args.json {
        crate::cmd::out(format_args!(
            "{}",
            serde_json::to_string_pretty(&report.to_json()).unwrap_or_default()
        ));
    } else {
        crate::cmd::out_bytes(report.to_text().as_bytes());
    }
    if report.failed() {
        DoctorExit::CheckFailed
    } else {
        DoctorExit::AllInPlace
    }
}
