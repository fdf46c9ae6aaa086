//! Names a tenant writes (`spec.azureName`, `spec.owner`, Secret and resource references) checked before they
//! reach a URL.
//!
//! A custom resource is tenant input: a name such as `x/agentPools/evil` or `../../providers/…` spliced into an
//! ARM ID would address another resource. Every name that becomes a segment of an ARM ID is checked against
//! ARM's general naming rules — no `/ \ ? # % & : < > * +`, no control characters, not `.` or `..`, no
//! leading or trailing space, not ending in `.`, at most 260 characters (the rules every resource provider
//! shares, <https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules>) — and
//! resource group names against theirs (1–90 letters, digits, `_ - . ( )`, not ending in `.`; same page,
//! `Microsoft.Resources/resourcegroups`). What is left after these checks needs no percent-encoding except
//! non-ASCII letters, which the URL library encodes. The resource provider's own stricter rule (a pattern in
//! the spec) is enforced by Azure, which answers 400.
//!
//! Whole ARM IDs ([`check_arm_id`]) are checked segment by segment before every request, whatever they come from,
//! so that no request can leave the resource it was derived for. Kubernetes object names the tenant writes
//! (Secret names, referenced objects) must be DNS-1123 subdomains ([`check_object_name`]): the API client puts
//! them into URL paths without encoding.

/// The longest resource name ARM accepts for any resource type.
pub const MAX_NAME: usize = 260;

/// Checks one name that becomes a segment of an ARM ID; `what` names the field (`spec.azureName`).
pub fn check_segment(what: &str, name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if name.chars().count() > MAX_NAME {
        return Err(format!("{what} is longer than {MAX_NAME} characters"));
    }
    if name == "." || name == ".." {
        return Err(format!("{what} {name:?} is not a resource name"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| c.is_control() || matches!(c, '/' | '\\' | '?' | '#' | '%' | '&' | ':' | '<' | '>' | '*' | '+'))
    {
        return Err(format!(
            "{what} {name:?} contains {c:?}, which ARM resource names may not contain"
        ));
    }
    if name.starts_with(' ') || name.ends_with(' ') || name.ends_with('.') {
        return Err(format!(
            "{what} {name:?} may not start or end with a space or end with a period"
        ));
    }
    Ok(())
}

/// Checks a resource group name (`spec.owner.name` of a top-level kind).
pub fn check_resource_group(what: &str, name: &str) -> Result<(), String> {
    if name.is_empty() || name.chars().count() > 90 {
        return Err(format!("{what} {name:?}: a resource group name has 1 to 90 characters"));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '(' | ')')))
    {
        return Err(format!(
            "{what} {name:?} contains {c:?}; a resource group name has letters, digits, '_', '-', '.', '(' and ')'"
        ));
    }
    if name.ends_with('.') {
        return Err(format!("{what} {name:?} may not end with a period"));
    }
    Ok(())
}

/// Checks a whole ARM ID before a request: it starts with `/subscriptions/`, and every segment passes
/// [`check_segment`] (so there are no empty, `.` or `..` segments, no query or fragment).
pub fn check_arm_id(what: &str, id: &str) -> Result<(), String> {
    let Some(rest) = id.strip_prefix('/') else {
        return Err(format!(
            "{what} {id:?} is not an ARM resource ID (it must start with /subscriptions/)"
        ));
    };
    let segments: Vec<&str> = rest.split('/').collect();
    if segments.len() < 2 || !segments[0].eq_ignore_ascii_case("subscriptions") {
        return Err(format!(
            "{what} {id:?} is not an ARM resource ID (it must start with /subscriptions/)"
        ));
    }
    for segment in &segments {
        check_segment(what, segment).map_err(|e| format!("{e} (in ARM ID {id:?})"))?;
    }
    Ok(())
}

/// Parses a resource group's ARM ID (`spec.owner.armId` of a top-level kind): `(subscription, group)`.
pub fn parse_resource_group_id(what: &str, id: &str) -> Result<(String, String), String> {
    let trimmed = id.trim_end_matches('/');
    check_arm_id(what, trimmed)?;
    let segments: Vec<&str> = trimmed.trim_start_matches('/').split('/').collect();
    match segments.as_slice() {
        [s, sub, g, group] if s.eq_ignore_ascii_case("subscriptions") && g.eq_ignore_ascii_case("resourceGroups") => {
            check_resource_group(what, group)?;
            Ok((sub.to_string(), group.to_string()))
        }
        _ => Err(format!(
            "{what} {id:?} is not a resource group ID (/subscriptions/<id>/resourceGroups/<name>)"
        )),
    }
}

/// Checks a Kubernetes object name the tenant wrote (a Secret, a referenced custom resource): a DNS-1123
/// subdomain (lowercase letters, digits, `-` and `.`, at most 253 characters, starting and ending alphanumeric).
pub fn check_object_name(what: &str, name: &str) -> Result<(), String> {
    let ok = is_dns1123_subdomain(name);
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} {name:?} is not a Kubernetes object name (a DNS-1123 subdomain: lowercase letters, digits, '-' and '.')"
        ))
    }
}

/// Kubernetes' rule for object names such as Secrets (`IsDNS1123Subdomain`): dot-separated labels of lowercase
/// alphanumerics and `-`, each starting and ending alphanumeric, 253 characters at most.
pub fn is_dns1123_subdomain(name: &str) -> bool {
    name.len() <= 253
        && name.split('.').all(|label| {
            let bytes = label.as_bytes();
            !bytes.is_empty()
                && bytes.len() <= 63
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
                && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
                && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
        })
}

/// Checks a Secret key the tenant wrote: letters, digits, `-`, `_` and `.`, at most 253 characters (what
/// Kubernetes allows as a Secret's data key).
pub fn check_secret_key(what: &str, key: &str) -> Result<(), String> {
    let ok = !key.is_empty()
        && key.len() <= 253
        && key != "."
        && key != ".."
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} {key:?} is not a Secret or ConfigMap key (letters, digits, '-', '_' and '.')"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments() {
        for ok in ["demo", "pool1", "my-cluster_2", "a.b", "Ünïcode"] {
            assert_eq!(check_segment("n", ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "x/agentPools/evil",
            "a\\b",
            "a?b",
            "a#b",
            "a%2Fb",
            "a\nb",
            " a",
            "a.",
            "a:b",
        ] {
            assert!(check_segment("spec.azureName", bad).is_err(), "{bad:?}");
        }
        assert!(check_segment("n", &"a".repeat(261)).is_err());
        let e = check_segment("spec.azureName", "x/agentPools/evil").unwrap_err();
        assert!(
            e.starts_with("spec.azureName \"x/agentPools/evil\" contains '/'"),
            "{e}"
        );
    }

    #[test]
    fn resource_groups() {
        for ok in ["rg", "rg-team_a.1", "(rg)"] {
            assert_eq!(check_resource_group("g", ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "../../../providers/Microsoft.Authorization/roleAssignments",
            "rg.",
            "r g",
            &"r".repeat(91),
        ] {
            assert!(check_resource_group("spec.owner.name", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn arm_ids() {
        let good = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c";
        assert_eq!(check_arm_id("id", good), Ok(()));
        for bad in [
            "subscriptions/s",
            "/providers/Microsoft.Authorization/roleAssignments/x",
            "/subscriptions/s/resourceGroups/rg/../../x",
            "/subscriptions/s/resourceGroups//x",
            "/subscriptions/s/resourceGroups/rg?x=1",
            "/subscriptions/s/resourceGroups/rg#x",
        ] {
            assert!(check_arm_id("status.id", bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse_resource_group_id("o", "/subscriptions/s/resourceGroups/rg/"),
            Ok(("s".into(), "rg".into()))
        );
        assert!(parse_resource_group_id("o", good).is_err());
    }

    #[test]
    fn object_names_and_keys() {
        assert_eq!(check_object_name("s", "my-secret.v1"), Ok(()));
        for bad in ["", "../x", "a/b", "UPPER", "-a", "a..b"] {
            assert!(check_object_name("s", bad).is_err(), "{bad:?}");
        }
        assert_eq!(check_secret_key("k", "client_secret.txt"), Ok(()));
        for bad in ["", "..", "a/b"] {
            assert!(check_secret_key("k", bad).is_err(), "{bad:?}");
        }
    }
}
