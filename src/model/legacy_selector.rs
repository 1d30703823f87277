//! The v1alpha5-era selector maps of an AWSNodeTemplate (`amiSelector`, `subnetSelector`,
//! `securityGroupSelector`): every value is a comma list, and `aws::ids` (or `aws-ids`) holds
//! ids rather than a tag (`aws v0.31.0: pkg/apis/v1alpha1/awsnodetemplate_validation.go`).

/// A comma list split: items trimmed, empty items dropped.
pub fn split_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether a selector key names ids (`aws::ids`, or the older `aws-ids`).
pub fn is_ids_key(key: &str) -> bool {
    key == "aws::ids" || key == "aws-ids"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comma_lists_split_trimmed_without_empty_items() {
        let table: &[(&str, &[&str])] = &[
            ("", &[]),
            (",", &[]),
            (" , ,", &[]),
            ("ami-1", &["ami-1"]),
            ("ami-1,ami-2", &["ami-1", "ami-2"]),
            (" ami-1 , ami-2 ,", &["ami-1", "ami-2"]),
            ("a,,b", &["a", "b"]),
            ("*", &["*"]),
            ("a b,c", &["a b", "c"]),
        ];
        for (value, want) in table {
            assert_eq!(split_list(value), *want, "{value:?}");
        }
    }

    #[test]
    fn both_ids_spellings_name_ids() {
        let table = [
            ("aws::ids", true),
            ("aws-ids", true),
            ("aws::owners", false),
            ("aws::name", false),
            ("ids", false),
            ("AWS::IDS", false),
        ];
        for (key, want) in table {
            assert_eq!(is_ids_key(key), want, "{key}");
        }
    }
}
