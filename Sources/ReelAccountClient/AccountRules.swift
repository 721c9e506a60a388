import Foundation

/// The accounts API's field rules, shared by `reel serve` (which enforces them) and the
/// clients (which check them inline, before a request): the same answer on both sides.
public enum AccountRules {
    /// The shortest password `POST /api/register` accepts.
    public static let minimumPasswordLength = 8
    /// The longest password, in UTF-8 bytes.
    public static let maximumPasswordBytes = 1024

    /// 3–32 ASCII letters, digits, `_`, `.` or `-`, starting with a letter or digit.
    public static func validName(_ name: String) -> Bool {
        guard (3...32).contains(name.count), let first = name.unicodeScalars.first,
              CharacterSet.alphanumerics.contains(first), first.isASCII else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "_.-".unicodeScalars.contains($0)) }
    }

    /// `local@domain.tld`: one `@`, a non-empty local part of at most 64 characters, a
    /// domain of two or more labels of letters, digits and inner hyphens; no spaces.
    public static func validEmail(_ email: String) -> Bool {
        guard email.utf8.count <= 254, !email.contains(where: { $0.isWhitespace || $0.isNewline }) else { return false }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
            && labels.joined().unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || $0 == "-" }
    }

    /// 1–40 ASCII letters, digits, `_` or `-` (not starting with `-`), not `avatars`.
    public static func validCategory(_ category: String) -> Bool {
        guard (1...40).contains(category.count), category != "avatars" else { return false }
        return category.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_" || $0 == "-") }
            && category.first != "-"
    }
}
