//! JSON Patch (RFC 6902) on a variant list: strict decoding and all-or-nothing application.

use json_patch::jsonptr::index::{Index, ParseIndexError};
use json_patch::jsonptr::{Pointer, PointerBuf, Token};
use json_patch::{
    AddOperation, CopyOperation, MoveOperation, Patch, PatchError, PatchOperation, RemoveOperation,
    ReplaceOperation,
};
use serde_json::{Map, Value};

use super::{describe, problems};
use crate::error::pointer_token;
use crate::error::{Error, ErrorDetail};
use crate::model::Variant;

/// The prefix of every message about a patch that cannot be applied, as Unleash words it.
const APPLY_PREFIX: &str = "Could not apply provided patch: ";

/// The operations a variants patch may use.
const SUPPORTED_OPS: &str = "add, remove, replace, copy or move";

/// Decodes a JSON Patch body: a JSON array of operation objects `{op, path, from?, value?}`.
///
/// `op` is one of `add`, `remove`, `replace`, `copy`, `move`; `path` (and `from` for `copy`
/// and `move`) is a JSON pointer string (empty, or starting with `/`, `~` only as `~0`/`~1`);
/// `value` is required for `add` and `replace` and may be any JSON, `null` included. Every
/// problem is reported in one [`Error::Validation`], each detail at a JSON pointer into the
/// body that names the operation and member (`/3/path`, `/0/op`) and a message naming the
/// operation index. A body that is not an array is reported at `""`.
///
/// Where we differ from Unleash: `test` is refused like any unknown op (as in Unleash 6.10.1),
/// and so are keys other than `op`, `path`, `from` and `value` (RFC 6902 says to ignore them;
/// Unleash's schema refuses them too). `from` or `value` on an operation that does not use them
/// is ignored, as RFC 6902 asks, but must still have the right type. A path that is not a JSON
/// pointer (`0/weight`) is an error; Unleash silently does nothing with it.
pub fn decode_patch(body: &Value) -> Result<Patch, Error> {
    let Value::Array(items) = body else {
        return Err(problems(
            "patch",
            vec![ErrorDetail::at(
                "",
                format!(
                    "the patch must be an array of operations, not {}",
                    describe(body)
                ),
            )],
        ));
    };
    let mut details = Vec::new();
    let mut operations = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        if let Some(operation) = decode_operation(index, item, &mut details) {
            operations.push(operation);
        }
    }
    if details.is_empty() {
        Ok(Patch(operations))
    } else {
        Err(problems("patch", details))
    }
}

/// The operation kinds we accept.
#[derive(Clone, Copy)]
enum Op {
    Add,
    Remove,
    Replace,
    Copy,
    Move,
}

/// Decodes operation `index`; `None` when it has a problem (recorded in `details`).
fn decode_operation(
    index: usize,
    item: &Value,
    details: &mut Vec<ErrorDetail>,
) -> Option<PatchOperation> {
    let Value::Object(fields) = item else {
        details.push(ErrorDetail::at(
            format!("/{index}"),
            format!(
                "operation {index} must be an object {{op, path, from?, value?}}, not {}",
                describe(item)
            ),
        ));
        return None;
    };
    let before = details.len();
    for key in fields.keys() {
        if !matches!(key.as_str(), "op" | "path" | "from" | "value") {
            details.push(ErrorDetail::at(
                format!("/{index}/{}", pointer_token(key)),
                format!("operation {index}: unknown field `{key}`"),
            ));
        }
    }
    let op = decode_op(index, fields.get("op"), details);
    let path = decode_pointer(index, "path", fields.get("path"), true, details);
    let needs_from = matches!(op, Some(Op::Copy | Op::Move));
    let from = decode_pointer(index, "from", fields.get("from"), needs_from, details);
    let value = fields.get("value").cloned();
    if value.is_none() && matches!(op, Some(Op::Add | Op::Replace)) {
        details.push(ErrorDetail::at(
            format!("/{index}/value"),
            format!("operation {index}: `value` is required"),
        ));
    }
    if details.len() != before {
        return None;
    }
    let path = path?;
    Some(match op? {
        Op::Add => PatchOperation::Add(AddOperation {
            path,
            value: value?,
        }),
        Op::Remove => PatchOperation::Remove(RemoveOperation { path }),
        Op::Replace => PatchOperation::Replace(ReplaceOperation {
            path,
            value: value?,
        }),
        Op::Copy => PatchOperation::Copy(CopyOperation { from: from?, path }),
        Op::Move => PatchOperation::Move(MoveOperation { from: from?, path }),
    })
}

fn decode_op(index: usize, value: Option<&Value>, details: &mut Vec<ErrorDetail>) -> Option<Op> {
    let problem = match value {
        Some(Value::String(op)) => match op.as_str() {
            "add" => return Some(Op::Add),
            "remove" => return Some(Op::Remove),
            "replace" => return Some(Op::Replace),
            "copy" => return Some(Op::Copy),
            "move" => return Some(Op::Move),
            "test" => format!("operation {index}: `test` is not supported; use {SUPPORTED_OPS}"),
            other => format!(
                "operation {index}: unknown op {}; use {SUPPORTED_OPS}",
                Value::from(other)
            ),
        },
        None => format!("operation {index}: `op` is required"),
        Some(other) => format!(
            "operation {index}: `op` must be a string, not {}",
            describe(other)
        ),
    };
    details.push(ErrorDetail::at(format!("/{index}/op"), problem));
    None
}

/// Decodes the pointer member `member` of operation `index`.
fn decode_pointer(
    index: usize,
    member: &str,
    value: Option<&Value>,
    required: bool,
    details: &mut Vec<ErrorDetail>,
) -> Option<PointerBuf> {
    let problem = match value {
        None if required => format!("operation {index}: `{member}` is required"),
        None => return None,
        Some(Value::String(text)) => match Pointer::parse(text) {
            Ok(pointer) => return Some(pointer.to_buf()),
            Err(err) if err.is_no_leading_slash() => format!(
                "operation {index}: `{member}` {} is not a JSON pointer: it must be empty or start with `/`",
                Value::from(text.as_str())
            ),
            Err(_) => format!(
                "operation {index}: `{member}` {} is not a JSON pointer: `~` must be followed by 0 or 1",
                Value::from(text.as_str())
            ),
        },
        Some(other) => format!(
            "operation {index}: `{member}` must be a string, not {}",
            describe(other)
        ),
    };
    details.push(ErrorDetail::at(format!("/{index}/{member}"), problem));
    None
}

/// Applies `patch` to the list `current` (the document root is the array), strictly and all
/// or nothing, and returns the patched document, not yet validated
/// ([`normalise_variants`](super::normalise_variants) does that).
///
/// Strict RFC 6902, via `json_patch::patch`: an index past the end (`add /5` on a 1-element
/// list, `remove /3`), a missing member (`replace /0/nope`), a non-numeric or zero-padded array
/// index (`add /abc`, `/01`), `-` where an existing element is needed, removing the whole
/// document, moving a value into itself, all fail. Operations apply in order; when one fails
/// nothing is applied.
///
/// A failure is an [`Error::Validation`] whose message is
/// `Could not apply provided patch: operation <i> (<op> <path>): <reason>`, e.g.
/// `Could not apply provided patch: operation 0 (add /5): index 5 is past the end of the list`,
/// with one detail at `/<i>` (the operation in the patch body) and the crate's
/// [`PatchError`] as its source. A `test` operation (which [`decode_patch`] never produces, but
/// a Rust caller can build) is refused the same way before anything is applied.
///
/// Where we differ from Unleash: Unleash's lenient mode appends on `add` past the end, ignores
/// an out-of-range `remove` and non-numeric indices, and turns `replace` of a missing member
/// into an `add`; the reason after the prefix is ours (Unleash shows a JavaScript exception).
pub fn apply_patch(current: &[Variant], patch: &Patch) -> Result<Value, Error> {
    let original = Value::Array(current.iter().map(variant_json).collect());
    apply_patch_json(&original, patch)
}

/// [`apply_patch`] on the list as JSON (as [`Variant`]s serialise), e.g. straight from a
/// stored record: the same rules and errors, without decoding the list first.
pub fn apply_patch_json(original: &Value, patch: &Patch) -> Result<Value, Error> {
    apply_patch_to(original.clone(), patch)
}

/// [`apply_patch_json`] on a list the caller owns (e.g. just parsed from a stored record):
/// patched in place, no copy. On failure the list is restored first (`json_patch::patch`
/// reverts what it applied), so the error describes the original.
pub fn apply_patch_to(mut document: Value, patch: &Patch) -> Result<Value, Error> {
    if let Some((index, test)) = patch
        .iter()
        .enumerate()
        .find(|(_, operation)| matches!(operation, PatchOperation::Test(_)))
    {
        let reason = format!("`test` is not supported; use {SUPPORTED_OPS}");
        return Err(failure(index, test, &reason, None));
    }
    match json_patch::patch(&mut document, patch) {
        Ok(()) => Ok(document),
        Err(err) => {
            let index = err.operation;
            let reason =
                explain_failure(&document, patch, index).unwrap_or_else(|| err.kind.to_string());
            match patch.get(index) {
                Some(operation) => Err(failure(index, operation, &reason, Some(err))),
                None => Err(Error::Validation {
                    message: format!("{APPLY_PREFIX}{err}"),
                    details: vec![ErrorDetail::at(format!("/{index}"), err.to_string())],
                    source: Some(Box::new(err)),
                }),
            }
        }
    }
}

/// The error for operation `index` failing for `reason`.
fn failure(
    index: usize,
    operation: &PatchOperation,
    reason: &str,
    source: Option<PatchError>,
) -> Error {
    let detail = format!(
        "operation {index} ({}): {reason}",
        describe_operation(operation)
    );
    Error::Validation {
        message: format!("{APPLY_PREFIX}{detail}"),
        details: vec![ErrorDetail::at(format!("/{index}"), detail)],
        source: source.map(|err| Box::new(err) as Box<dyn std::error::Error + Send + Sync>),
    }
}

/// `add /5`, `move from /1 to /0`: the operation as the messages name it.
fn describe_operation(operation: &PatchOperation) -> String {
    match operation {
        PatchOperation::Add(op) => format!("add {}", shown(&op.path)),
        PatchOperation::Remove(op) => format!("remove {}", shown(&op.path)),
        PatchOperation::Replace(op) => format!("replace {}", shown(&op.path)),
        PatchOperation::Test(op) => format!("test {}", shown(&op.path)),
        PatchOperation::Move(op) => format!("move from {} to {}", shown(&op.from), shown(&op.path)),
        PatchOperation::Copy(op) => format!("copy from {} to {}", shown(&op.from), shown(&op.path)),
    }
}

/// A pointer as messages show it: the root as `""`.
fn shown(pointer: &Pointer) -> String {
    if pointer.is_root() {
        "\"\"".to_owned()
    } else {
        pointer.to_string()
    }
}

/// Why operation `index` of `patch` failed on `original`, replaying the operations before it
/// (which succeeded). `None` if it cannot tell.
fn explain_failure(original: &Value, patch: &[PatchOperation], index: usize) -> Option<String> {
    let mut document = original.clone();
    json_patch::patch_unsafe(&mut document, patch.get(..index)?).ok()?;
    match patch.get(index)? {
        PatchOperation::Add(op) => explain_add(&document, &op.path),
        PatchOperation::Remove(op) if op.path.is_root() => {
            Some("cannot remove the whole document".to_owned())
        }
        PatchOperation::Remove(RemoveOperation { path })
        | PatchOperation::Replace(ReplaceOperation { path, .. }) => resolve(&document, path).err(),
        PatchOperation::Copy(op) => match resolve(&document, &op.from) {
            Err(reason) => Some(format!("from: {reason}")),
            Ok(_) => explain_add(&document, &op.path),
        },
        PatchOperation::Move(op) => {
            if op.path.starts_with(&op.from) && op.path.len() != op.from.len() {
                return Some("cannot move a value into itself".to_owned());
            }
            if op.from.is_root() {
                return Some("from: cannot move the whole document".to_owned());
            }
            if let Err(reason) = resolve(&document, &op.from) {
                return Some(format!("from: {reason}"));
            }
            let removal = PatchOperation::Remove(RemoveOperation {
                path: op.from.clone(),
            });
            json_patch::patch_unsafe(&mut document, &[removal]).ok()?;
            explain_add(&document, &op.path)
        }
        PatchOperation::Test(_) => Some(format!("`test` is not supported; use {SUPPORTED_OPS}")),
    }
}

/// Why `add` at `path` cannot be done in `document`, if it cannot.
fn explain_add(document: &Value, path: &Pointer) -> Option<String> {
    let (parent_path, last) = path.split_back()?;
    let parent = match resolve(document, parent_path) {
        Ok(parent) => parent,
        Err(reason) => return Some(reason),
    };
    match parent {
        Value::Object(_) => None,
        Value::Array(list) => array_index(&last, list.len(), true, parent_path).err(),
        scalar => Some(format!(
            "{} is {}, which cannot hold members",
            place(parent_path),
            describe(scalar)
        )),
    }
}

/// The value `pointer` designates in `document`, or why there is none.
fn resolve<'v>(document: &'v Value, pointer: &Pointer) -> Result<&'v Value, String> {
    let mut current = document;
    let mut here = PointerBuf::new();
    for token in pointer.tokens() {
        current = match current {
            Value::Object(members) => members
                .get(token.decoded().as_ref())
                .ok_or_else(|| format!("{} has no member `{}`", place(&here), token.decoded()))?,
            Value::Array(list) => {
                let index = array_index(&token, list.len(), false, &here)?;
                list.get(index).ok_or_else(|| past_the_end(index, &here))?
            }
            scalar => {
                return Err(format!(
                    "{} is {}, which has no members",
                    place(&here),
                    describe(scalar)
                ));
            }
        };
        here.push_back(token);
    }
    Ok(current)
}

/// The position `token` names in a list of `len` elements at `list`; `-` and `len` itself
/// only when `insert`ing.
fn array_index(token: &Token, len: usize, insert: bool, list: &Pointer) -> Result<usize, String> {
    match token.to_index() {
        Ok(Index::Num(index)) if index < len || (insert && index == len) => Ok(index),
        Ok(Index::Num(index)) => Err(past_the_end(index, list)),
        Ok(Index::Next) if insert => Ok(len),
        Ok(Index::Next) => Err(format!(
            "`-` (after the last element) names no element{}",
            in_list(list)
        )),
        Err(ParseIndexError::LeadingZeros) => Err(format!(
            "`{}` is not a valid array index (leading zero){}",
            token.encoded(),
            in_list(list)
        )),
        Err(_) => Err(format!(
            "`{}` is not an array index{}",
            token.encoded(),
            in_list(list)
        )),
    }
}

fn past_the_end(index: usize, list: &Pointer) -> String {
    format!("index {index} is past the end of the list{}", in_list(list))
}

/// ` at /0/overrides` for a nested list, nothing for the document itself.
fn in_list(list: &Pointer) -> String {
    if list.is_root() {
        String::new()
    } else {
        format!(" at {list}")
    }
}

/// How messages name a location: `the document` or the pointer.
fn place(pointer: &Pointer) -> String {
    if pointer.is_root() {
        "the document".to_owned()
    } else {
        pointer.to_string()
    }
}

/// `variant` as its wire JSON, built by hand so that it cannot fail.
fn variant_json(variant: &Variant) -> Value {
    let mut members = Map::new();
    members.insert("name".to_owned(), Value::from(variant.name.as_str()));
    members.insert("weight".to_owned(), Value::from(variant.weight));
    if let Some(weight_type) = variant.weight_type {
        members.insert("weightType".to_owned(), Value::from(weight_type.as_str()));
    }
    if let Some(stickiness) = &variant.stickiness {
        members.insert("stickiness".to_owned(), Value::from(stickiness.as_str()));
    }
    if let Some(payload) = &variant.payload {
        let mut fields = Map::new();
        fields.insert(
            "type".to_owned(),
            Value::from(payload.payload_type.as_str()),
        );
        fields.insert("value".to_owned(), Value::from(payload.value.as_str()));
        members.insert("payload".to_owned(), Value::Object(fields));
    }
    if let Some(overrides) = &variant.overrides {
        let list = overrides
            .iter()
            .map(|o| {
                let mut fields = Map::new();
                fields.insert(
                    "contextName".to_owned(),
                    Value::from(o.context_name.as_str()),
                );
                fields.insert(
                    "values".to_owned(),
                    Value::Array(o.values.iter().map(|v| Value::from(v.as_str())).collect()),
                );
                Value::Object(fields)
            })
            .collect();
        members.insert("overrides".to_owned(), Value::Array(list));
    }
    Value::Object(members)
}
