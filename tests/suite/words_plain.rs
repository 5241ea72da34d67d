//! Refusals and failures in plain words (issue 43, item 7): `--host` given an ssh destination
//! where a host name belongs names the hosts file and the `NAME=DEST` form; `status --host H`
//! without `--json` prints the page in `status`'s own words and a failure as a sentence, never
//! JSON (on real sshd servers in network namespaces where a host answers or refuses).

use crate::hosts_support::Net;
use crate::scan_support::Env;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_destination_given_to_host_names_the_hosts_file_and_the_name_equals_dest_form() {
    let env = Env::new();
    let file = env.path("home").join(".config/intercom-pane/hosts.json");
    for cmd in [&["status"][..], &["scan", "--json"], &["reply", "W1", "hi"]] {
        let mut args: Vec<&str> = cmd.to_vec();
        args.extend(["--host", "build.example.com"]);
        let o = env.run(&args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}: {err}");
        assert_eq!(
            err.trim_end(),
            format!(
                "intercom-pane: build.example.com is not in the hosts file ({}); to use it for \
                 this run say --host build=build.example.com, or add it to the hosts file under \
                 a name",
                file.display()
            ),
            "{cmd:?}"
        );
        assert!(o.stdout.is_empty(), "{cmd:?}: {}", text(&o.stdout));
    }
    // A user and a port: the name offered is the machine's; an address gets `NAME`.
    let o = env.run(&["status", "--host", "me@gpu.lan:2222"]);
    assert!(
        text(&o.stderr).contains("say --host gpu=me@gpu.lan:2222"),
        "{}",
        text(&o.stderr)
    );
    let o = env.run(&["status", "--host", "10.0.0.7"]);
    assert!(
        text(&o.stderr).contains("say --host NAME=10.0.0.7"),
        "{}",
        text(&o.stderr)
    );
    // Neither a name nor a destination: refused as before, its control bytes not echoed.
    let o = env.run(&["status", "--host", "$(touch x).b\u{1b}[2J"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("is not a host name") && !err.contains('\u{1b}'),
        "{err}"
    );
    assert!(!env.path("x").exists());
}

#[test]
fn status_of_an_unreachable_host_is_a_sentence_without_json_and_json_with_it() {
    // No ssh on PATH: nothing can run there.
    let env = Env::new();
    let o = env.run(&["status", "--host", "gpu=gpu.example"]);
    assert_eq!(o.status.code(), Some(20), "{o:?}");
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    assert_eq!(
        text(&o.stderr).trim_end(),
        "intercom-pane: host gpu: not done: ssh is not installed"
    );
    let o = env.run(&["status", "--json", "--host", "gpu=gpu.example"]);
    assert_eq!(o.status.code(), Some(20), "{o:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["outcome"], "not_started", "{v}");
    assert_eq!(v["host"], "gpu", "{v}");
}

#[test]
#[cfg_attr(
    not(hosts_tier),
    ignore = "needs root, OpenSSH's sshd, ssh, ssh-keygen, ip and unshare (the multi-host tier; .ci/run installs openssh-server)"
)]
fn status_of_another_host_reads_as_status_here_and_a_refusing_host_as_a_sentence() {
    let net = Net::new(&[("a", &["Builder"]), ("b", &["Builder"])], &[]);
    net.write_hosts_file(&[]);
    net.host("b").deny();

    let o = net.run(&["status", "--host", "a"], None);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out} {}", text(&o.stderr));
    assert!(out.starts_with("host a:\n"), "{out}");
    assert!(out.contains("Builder") && !out.contains('{'), "{out}");
    // The same page as JSON with --json, naming its host.
    let o = net.run(&["status", "--json", "--host", "a"], None);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["host"], "a", "{v}");

    let o = net.run(&["status", "--host", "b"], None);
    let err = text(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
    assert!(
        err.starts_with("intercom-pane: host b: not done: ") && !err.contains('{'),
        "{err}"
    );
}

#[test]
fn naming_a_worker_where_no_roster_is_says_where_it_looked_and_that_root_names_one() {
    let env = Env::new().with_system_path();
    let here = env.dir.path().display().to_string();
    let looked = format!(
        "no roster was found here (no .pi-intercom/config.json in {here} or any folder above it); \
         --root DIR names the folder that holds .pi-intercom/config.json"
    );
    for (cmd, code, said) in [
        (
            &["reply", "Builder", "hello"][..],
            5,
            "no seat named \"Builder\": ",
        ),
        (&["explain", "Builder"], 5, "no seat named \"Builder\": "),
        (&["log", "Builder"], 5, "no seat named \"Builder\": "),
        (
            &["close-worker", "Builder"],
            2,
            "close-worker: nothing to close: ",
        ),
        (
            &["resume-worker", "Builder"],
            2,
            "resume-worker: nothing to resume: ",
        ),
        (&["retire", "Builder"], 2, "retire: "),
    ] {
        let o = env.run(cmd);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{cmd:?}: {err}");
        assert_eq!(
            err.trim_end(),
            format!("intercom-pane: {said}{looked}"),
            "{cmd:?}"
        );
    }
    // jump NAME: nothing to go to (3), in the same words.
    let o = env.run(&["jump", "Builder"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert_eq!(
        err.trim_end(),
        format!("intercom-pane jump: no seat named \"Builder\": {looked}")
    );
    // With the roster named, the same name is judged against it (no word of a missing roster).
    crate::scan_support::write_roster(&env.path("root"), &[("w-1", "Builder")]);
    let o = env.run(&["reply", "--root", "root", "Nobody", "hello"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(5), "{err}");
    assert!(
        err.contains("no seat named \"Nobody\"") && !err.contains("no roster"),
        "{err}"
    );
}
