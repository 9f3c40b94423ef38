//! gRPC status codes and the status a CSI RPC fails with.
//!
//! Every CSI RPC answers with a gRPC status (`container-storage-interface/spec:spec.md`,
//! "Error Scheme"); `details` MUST be empty, so a status is just a code and a message.
//! Codes and their numbers are gRPC's (`grpc/grpc:doc/statuscodes.md`).
//!
//! Printing: the lab prints the canonical UPPER_SNAKE name with the number
//! (`INVALID_ARGUMENT (3): Name missing in request`), the form the gRPC docs use and the one
//! that matches the CSI spec's error tables. `Status::go_error_string` gives the text grpc-go
//! clients (csi-sanity, sidecars) log: `rpc error: code = InvalidArgument desc = …`. As JSON a
//! status is a `google.rpc.Status` in protojson form: `{"code": 3, "message": "…"}`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A gRPC status code (`google.rpc.Code`), OK = 0 … UNAUTHENTICATED = 16.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// 0: not an error.
    Ok,
    /// 1: the operation was cancelled by the caller.
    Cancelled,
    /// 2: unknown error.
    Unknown,
    /// 3: the client gave an invalid or missing argument.
    InvalidArgument,
    /// 4: the deadline expired.
    DeadlineExceeded,
    /// 5: an entity was not found.
    NotFound,
    /// 6: the entity already exists (or exists incompatibly).
    AlreadyExists,
    /// 7: the caller may not do this.
    PermissionDenied,
    /// 8: a resource (space, attach slots) is exhausted.
    ResourceExhausted,
    /// 9: the system is not in the state the operation needs.
    FailedPrecondition,
    /// 10: aborted (conflict, bad paging token).
    Aborted,
    /// 11: a value is outside the supported range.
    OutOfRange,
    /// 12: not implemented or not supported.
    Unimplemented,
    /// 13: an internal invariant broke.
    Internal,
    /// 14: the service is unavailable.
    Unavailable,
    /// 15: unrecoverable data loss.
    DataLoss,
    /// 16: the request lacks valid credentials.
    Unauthenticated,
}

const ALL_CODES: [Code; 17] = [
    Code::Ok,
    Code::Cancelled,
    Code::Unknown,
    Code::InvalidArgument,
    Code::DeadlineExceeded,
    Code::NotFound,
    Code::AlreadyExists,
    Code::PermissionDenied,
    Code::ResourceExhausted,
    Code::FailedPrecondition,
    Code::Aborted,
    Code::OutOfRange,
    Code::Unimplemented,
    Code::Internal,
    Code::Unavailable,
    Code::DataLoss,
    Code::Unauthenticated,
];

impl Code {
    /// The numeric code on the wire.
    pub fn number(self) -> i32 {
        match self {
            Code::Ok => 0,
            Code::Cancelled => 1,
            Code::Unknown => 2,
            Code::InvalidArgument => 3,
            Code::DeadlineExceeded => 4,
            Code::NotFound => 5,
            Code::AlreadyExists => 6,
            Code::PermissionDenied => 7,
            Code::ResourceExhausted => 8,
            Code::FailedPrecondition => 9,
            Code::Aborted => 10,
            Code::OutOfRange => 11,
            Code::Unimplemented => 12,
            Code::Internal => 13,
            Code::Unavailable => 14,
            Code::DataLoss => 15,
            Code::Unauthenticated => 16,
        }
    }

    /// The code with this number, if it is one of the 17 gRPC codes.
    pub fn from_number(n: i32) -> Option<Code> {
        ALL_CODES.iter().copied().find(|c| c.number() == n)
    }

    /// The canonical name, as the gRPC docs and the CSI spec print it (`INVALID_ARGUMENT`).
    pub fn name(self) -> &'static str {
        match self {
            Code::Ok => "OK",
            Code::Cancelled => "CANCELLED",
            Code::Unknown => "UNKNOWN",
            Code::InvalidArgument => "INVALID_ARGUMENT",
            Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
            Code::NotFound => "NOT_FOUND",
            Code::AlreadyExists => "ALREADY_EXISTS",
            Code::PermissionDenied => "PERMISSION_DENIED",
            Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
            Code::FailedPrecondition => "FAILED_PRECONDITION",
            Code::Aborted => "ABORTED",
            Code::OutOfRange => "OUT_OF_RANGE",
            Code::Unimplemented => "UNIMPLEMENTED",
            Code::Internal => "INTERNAL",
            Code::Unavailable => "UNAVAILABLE",
            Code::DataLoss => "DATA_LOSS",
            Code::Unauthenticated => "UNAUTHENTICATED",
        }
    }

    /// The name grpc-go prints (`codes.Code.String()`, e.g. `InvalidArgument`).
    pub(crate) fn go_name(self) -> &'static str {
        match self {
            Code::Ok => "OK",
            Code::Cancelled => "Canceled",
            Code::Unknown => "Unknown",
            Code::InvalidArgument => "InvalidArgument",
            Code::DeadlineExceeded => "DeadlineExceeded",
            Code::NotFound => "NotFound",
            Code::AlreadyExists => "AlreadyExists",
            Code::PermissionDenied => "PermissionDenied",
            Code::ResourceExhausted => "ResourceExhausted",
            Code::FailedPrecondition => "FailedPrecondition",
            Code::Aborted => "Aborted",
            Code::OutOfRange => "OutOfRange",
            Code::Unimplemented => "Unimplemented",
            Code::Internal => "Internal",
            Code::Unavailable => "Unavailable",
            Code::DataLoss => "DataLoss",
            Code::Unauthenticated => "Unauthenticated",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.number())
    }
}

/// The gRPC status of a failed CSI call: a code and a message (no details, as CSI requires).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The gRPC code.
    pub code: Code,
    /// The human-readable message the plugin returned.
    pub message: String,
}

impl Status {
    /// A status with this code and message.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Status {
            code,
            message: message.into(),
        }
    }

    /// INVALID_ARGUMENT (3).
    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        Status::new(Code::InvalidArgument, message)
    }

    /// NOT_FOUND (5).
    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Status::new(Code::NotFound, message)
    }

    /// ALREADY_EXISTS (6).
    pub(crate) fn already_exists(message: impl Into<String>) -> Self {
        Status::new(Code::AlreadyExists, message)
    }

    /// RESOURCE_EXHAUSTED (8).
    pub(crate) fn resource_exhausted(message: impl Into<String>) -> Self {
        Status::new(Code::ResourceExhausted, message)
    }

    /// FAILED_PRECONDITION (9).
    pub(crate) fn failed_precondition(message: impl Into<String>) -> Self {
        Status::new(Code::FailedPrecondition, message)
    }

    /// ABORTED (10).
    pub(crate) fn aborted(message: impl Into<String>) -> Self {
        Status::new(Code::Aborted, message)
    }

    /// OUT_OF_RANGE (11).
    pub(crate) fn out_of_range(message: impl Into<String>) -> Self {
        Status::new(Code::OutOfRange, message)
    }

    /// UNIMPLEMENTED (12).
    pub fn unimplemented(message: impl Into<String>) -> Self {
        Status::new(Code::Unimplemented, message)
    }

    /// INTERNAL (13).
    pub fn internal(message: impl Into<String>) -> Self {
        Status::new(Code::Internal, message)
    }

    /// UNAVAILABLE (14).
    pub fn unavailable(message: impl Into<String>) -> Self {
        Status::new(Code::Unavailable, message)
    }

    /// What grpc-go's `status.Error(...).Error()` prints, as sidecar and csi-sanity logs show it.
    pub(crate) fn go_error_string(&self) -> String {
        format!(
            "rpc error: code = {} desc = {}",
            self.code.go_name(),
            self.message
        )
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Status {}

/// `google.rpc.Status` in protojson: `code` as a number, `message` omitted when empty.
#[derive(Serialize, Deserialize)]
struct WireStatus {
    #[serde(default, skip_serializing_if = "is_zero")]
    code: i32,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    message: String,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

impl Serialize for Status {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        WireStatus {
            code: self.code.number(),
            message: self.message.clone(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let w = WireStatus::deserialize(d)?;
        let code = Code::from_number(w.code)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown gRPC code {}", w.code)))?;
        Ok(Status {
            code,
            message: w.message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_print() {
        for n in 0..=16 {
            let c = Code::from_number(n).unwrap();
            assert_eq!(c.number(), n);
        }
        assert_eq!(Code::from_number(17), None);
        assert_eq!(
            Code::ResourceExhausted.to_string(),
            "RESOURCE_EXHAUSTED (8)"
        );
    }

    #[test]
    fn status_prints_like_grpc() {
        let s = Status::invalid_argument("Name missing in request");
        assert_eq!(
            s.to_string(),
            "INVALID_ARGUMENT (3): Name missing in request"
        );
        assert_eq!(
            s.go_error_string(),
            "rpc error: code = InvalidArgument desc = Name missing in request"
        );
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"code":3,"message":"Name missing in request"}"#
        );
        let back: Status = serde_json::from_str(r#"{"code":9,"message":"x"}"#).unwrap();
        assert_eq!(back.code, Code::FailedPrecondition);
    }
}
