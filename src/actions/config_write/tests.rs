//! The splice and the guarded rewrite, on real files. Test code only (the architecture test reads
//! a file up to its first `cfg(test)`).
#[cfg(test)]
use super::*;
use serde_json::json;

#[test]
fn keeps_unknown_keys_and_other_entries_and_refuses_invalid_changes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let original = json!({"version": 1, "future": {"kept": true}, "agents": [
        {"sessionId": "c", "name": "Coordinator", "coordinator": true, "description": "C.",
         "port": 1, "projectDirectory": ".", "dashboardPort": 41999},
        {"sessionId": "w", "name": "W", "coordinator": false, "description": "W.", "port": 2,
         "projectDirectory": ".", "extra": "kept"}]});
    std::fs::write(root.join(".pi-intercom/config.json"), original.to_string()).unwrap();
    update_agent::<NoRefusal>(root, "w", &|o| {
        o.insert("port".into(), json!(3));
        Ok(())
    })
    .unwrap();
    let text = std::fs::read_to_string(root.join(".pi-intercom/config.json")).unwrap();
    // A compact file stays compact: only the changed members are printed anew.
    assert!(
        text.starts_with("{\"version\":1,\"future\":{\"kept\":true},"),
        "{text}"
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["future"]["kept"], true);
    assert_eq!(v["agents"][1]["extra"], "kept");
    assert_eq!(v["agents"][1]["port"], 3);
    // Nothing outside the edited entry changes: the coordinator keeps its legacy dashboardPort.
    assert_eq!(v["agents"][0]["dashboardPort"], 41999);
    // An edit that breaks validation writes nothing.
    let before = std::fs::read(root.join(".pi-intercom/config.json")).unwrap();
    let e = update_agent::<NoRefusal>(root, "w", &|o| {
        o.insert("port".into(), json!(0));
        Ok(())
    })
    .unwrap_err();
    assert!(e.to_string().contains("invalid"), "{e}");
    assert_eq!(
        std::fs::read(root.join(".pi-intercom/config.json")).unwrap(),
        before
    );
    assert!(update_agent::<NoRefusal>(root, "nobody", &|_| Ok(())).is_err());
    // No temp or lock file is left behind.
    let names: Vec<String> = std::fs::read_dir(root.join(".pi-intercom"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"config.json".to_string()), "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n == "config.json" || n == ".gitignore"),
        "{names:?}"
    );
}

/// Pretty text as Intercom writes it, with a huge integer and odd spacing in keys we do not
/// own: only our members change; mode 0644 stays 0644.
#[test]
fn splices_only_the_owned_members_and_keeps_mode_and_huge_numbers() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let text = r#"{
  "version": 1,
  "big": 123456789012345678901234567890,
  "agents": [
    {
      "sessionId": "c",
      "name": "Coordinator",
      "coordinator": true,
      "description": "C.",
      "port": 1,
      "projectDirectory": "."
    },
    {
      "sessionId": "w",
      "name": "W",
      "coordinator": false,
      "description": "W.",
      "port": 2,
      "projectDirectory": ".",
      "extra": {"n":   1.50e3, "huge": 98765432109876543210987654321}
    }
  ]
}
"#;
    let p = root.join(".pi-intercom/config.json");
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    update_agent::<NoRefusal>(root, "w", &|o| {
        o.insert(
            "closeJob".into(),
            json!({"jobId": "j", "state": "requested",
            "createdAt": "2026-11-30T00:00:00.000Z", "updatedAt": "2026-11-30T00:00:00.000Z",
            "deadlineAt": "2026-11-30T00:00:00.000Z"}),
        );
        Ok(())
    })
    .unwrap();
    let after = std::fs::read_to_string(&p).unwrap();
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    assert!(after.contains("\"big\": 123456789012345678901234567890,"));
    assert!(after.contains(
        "\"extra\": {\"n\":   1.50e3, \"huge\": 98765432109876543210987654321},\n      \"closeJob\": {\n        \"jobId\": \"j\","
    ), "{after}");
    // Everything before the edited member is byte-identical.
    let cut = text.find("\n    }\n  ]").unwrap();
    assert_eq!(&after[..cut], &text[..cut]);
    // Changing it again replaces only that member; removing it restores the original.
    update_agent::<NoRefusal>(root, "w", &|o| {
        o.remove("closeJob");
        Ok(())
    })
    .unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
}

/// Every layout a person or another tool may leave: the edited entry ends up exactly as the
/// edit says, every other entry and key as they were.
#[test]
fn splices_correctly_in_any_layout_and_position() {
    let base = json!({"version": 1, "agents": [
        {"sessionId": "c", "name": "Coordinator", "coordinator": true, "description": "C.",
         "port": 1, "projectDirectory": ".", "dashboardPort": 9},
        {"extra": 1, "sessionId": "w", "name": "W", "coordinator": false, "description": "W.",
         "port": 2, "projectDirectory": ".", "last": [1, {"a": "}"}]}]});
    let layouts = [
        serde_json::to_string(&base).unwrap(),
        serde_json::to_string_pretty(&base).unwrap(),
        serde_json::to_string_pretty(&base)
            .unwrap()
            .replace("  ", "\t"),
        serde_json::to_string_pretty(&base)
            .unwrap()
            .replace('\n', "\r\n"),
        serde_json::to_string(&base)
            .unwrap()
            .replace(',', " ,  ")
            .replace(':', " : "),
        comma_first(&base, "  ", "\n"),
        comma_first(&base, "\t", "\r\n"),
        // Mixed: CRLF and LF, TABs and spaces, the worker's entry comma-first.
        format!(
            "{{\r\n\t\"version\": 1,\n  \"agents\": [\r\n\t{},\n{}\n  ]\r\n}}",
            serde_json::to_string(&base["agents"][0]).unwrap(),
            comma_first(&base["agents"][1], "\t ", "\r\n")
        ),
    ];
    let edits: [(&str, AgentEdit<NoRefusal>); 4] = [
        ("drop first", &|o| {
            o.remove("extra");
            Ok(())
        }),
        ("drop last, add two", &|o| {
            o.remove("last");
            o.insert(
                "closeJob".into(),
                json!({"jobId": "j", "state": "failed",
                "createdAt": "2026-11-30T00:00:00.000Z", "updatedAt": "2026-11-30T00:00:00.000Z",
                "deadlineAt": "2026-11-30T00:00:00.000Z", "reason": "timeout"}),
            );
            o.insert("note".into(), json!("x"));
            Ok(())
        }),
        ("change middle", &|o| {
            o.insert("port".into(), json!(41002));
            Ok(())
        }),
        ("drop all but required", &|o| {
            o.remove("extra");
            o.remove("last");
            Ok(())
        }),
    ];
    for text in &layouts {
        for (what, edit) in &edits {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
            std::fs::write(root.join(".pi-intercom/config.json"), text).unwrap();
            update_agent(root, "w", edit).unwrap();
            let out = std::fs::read_to_string(root.join(".pi-intercom/config.json")).unwrap();
            let got: Value =
                serde_json::from_str(&out).unwrap_or_else(|e| panic!("{what}: {e}\n{out}"));
            let mut want = base.clone();
            edit(want["agents"][1].as_object_mut().unwrap()).unwrap();
            assert_eq!(got, want, "{what} in {text}");
            // Nothing outside the worker's entry moved, byte for byte.
            let start = text
                .find("{\"extra\"")
                .or_else(|| text.find("\"extra\""))
                .unwrap();
            let open = text[..start].rfind('{').unwrap();
            assert_eq!(&out[..open], &text[..open], "{what}");
            let tail = text.len() - text.rfind(']').unwrap();
            assert_eq!(
                &out[out.len() - tail..],
                &text[text.len() - tail..],
                "{what}"
            );
            // No line starts with a separator that is not the file's own, and CRLF files get
            // CRLF only.
            if text.contains("\r\n") && !text.contains("\n  \"agents") {
                assert!(!out.replace("\r\n", "").contains('\n'), "{what}: {out:?}");
            }
        }
    }
}

/// `v` printed comma-first (`\n, "key": value`), as some people and tools lay JSON out.
fn comma_first(v: &Value, unit: &str, nl: &str) -> String {
    fn go(v: &Value, ind: &str, unit: &str, nl: &str, out: &mut String) {
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (i, (k, x)) in m.iter().enumerate() {
                    out.push_str(if i == 0 { "{ " } else { "" });
                    if i > 0 {
                        out.push_str(&format!("{nl}{ind}, "));
                    }
                    out.push_str(&format!("{}: ", serde_json::to_string(k).unwrap()));
                    go(x, &format!("{ind}{unit}"), unit, nl, out);
                }
                out.push_str(&format!("{nl}{ind}}}"));
            }
            Value::Array(a) if !a.is_empty() => {
                for (i, x) in a.iter().enumerate() {
                    out.push_str(if i == 0 { "[ " } else { "" });
                    if i > 0 {
                        out.push_str(&format!("{nl}{ind}, "));
                    }
                    go(x, &format!("{ind}{unit}"), unit, nl, out);
                }
                out.push_str(&format!("{nl}{ind}]"));
            }
            x => out.push_str(&x.to_string()),
        }
    }
    let mut out = String::new();
    go(v, "", unit, nl, &mut out);
    out
}

/// The roster of issue 20: a worker entry whose last member is on a line starting with `, `.
/// A new member goes on its own line, comma-first like the rest; the result validates and the
/// coordinator's `dashboardPort` stays.
#[test]
fn a_comma_first_entry_gets_comma_first_members() {
    let text = "{ \"version\": 1\n, \"agents\":\n  [ { \"sessionId\": \"c\", \"name\": \"C\", \"coordinator\": true, \"description\": \"C.\", \"port\": 1, \"projectDirectory\": \".\", \"dashboardPort\": 41999 }\n  , { \"sessionId\": \"w\"\n    , \"name\": \"W\"\n    , \"coordinator\": false\n    , \"description\": \"W.\"\n    , \"port\": 2\n    , \"projectDirectory\": \".\"\n    }\n  ]\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let p = root.join(".pi-intercom/config.json");
    std::fs::write(&p, text).unwrap();
    update_agent::<NoRefusal>(root, "w", &|o| {
        o.insert(
            "handoff".into(),
            json!({"version": 1, "jobId": "j", "summary": "done", "updatedAt": "2026-11-30T00:00:00.000Z"}),
        );
        Ok(())
    })
    .unwrap();
    let out = std::fs::read_to_string(&p).unwrap();
    assert!(
        out.contains("\n    , \"projectDirectory\": \".\"\n    , \"handoff\": {\n      \"version\": 1,\n      \"jobId\": \"j\",\n      \"summary\": \"done\",\n      \"updatedAt\": \"2026-11-30T00:00:00.000Z\"\n    }\n    }\n  ]\n}\n"),
        "{out}"
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["agents"][0]["dashboardPort"], 41999);
}

/// A whole entry added and removed again: the mode, every unknown key and a number too
/// large for a float stay byte for byte; a refusal under the lock writes nothing.
#[test]
fn an_entry_is_added_and_removed_keeping_mode_unknown_keys_and_numbers() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".pi-intercom")).unwrap();
    let text = "{\n  \"version\": 1,\n  \"big\": 123456789012345678901234567890,\n  \"agents\": [\n    {\n      \"sessionId\": \"c\",\n      \"name\": \"Coordinator\",\n      \"coordinator\": true,\n      \"description\": \"C.\",\n      \"port\": 1,\n      \"projectDirectory\": \".\",\n      \"x\": 1.50e3\n    }\n  ]\n}\n";
    let p = root.join(".pi-intercom/config.json");
    std::fs::write(&p, text).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    let entry = json!({"sessionId": "w", "name": "W", "coordinator": false,
        "description": "W.", "port": 2, "projectDirectory": "."});
    let e = append_agent::<String>(root, &|cfg| {
        if cfg.find_by_name("w").is_some() {
            return Err("taken".into());
        }
        Ok(entry.as_object().unwrap().clone())
    });
    let (cfg, _) = e.unwrap();
    assert_eq!(cfg.agents.len(), 2);
    let after = std::fs::read_to_string(&p).unwrap();
    assert!(
        after.starts_with(&text[..text.find("\n    }").unwrap()]),
        "{after}"
    );
    assert!(after.contains("\"big\": 123456789012345678901234567890,"));
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
    // The same name again is refused under the lock: nothing written.
    let refused = append_agent::<String>(root, &|cfg| {
        if cfg.find_by_name("w").is_some() {
            return Err("taken".into());
        }
        Ok(entry.as_object().unwrap().clone())
    });
    assert!(matches!(refused, Err(WriteError::Refused(ref m)) if m == "taken"));
    assert_eq!(std::fs::read_to_string(&p).unwrap(), after);
    // Removed again: the original bytes; its exact text is handed back.
    let (_, gone) = remove_agent::<String>(root, "w", &|_, _| Ok(())).unwrap();
    assert!(gone.starts_with("{\n      \"sessionId\": \"w\""), "{gone}");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
    let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}
