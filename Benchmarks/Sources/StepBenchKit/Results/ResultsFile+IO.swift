import Foundation
import StepBenchScenarios

extension ResultsFile {
    /// Writes atomically: a temporary file beside `url`, then rename, so a reader never sees
    /// half a file and an interrupted run never destroys the previous one.
    /// A profile's whole call profiles go beside it, compressed (``CallProfiles``), written
    /// first, so that a file never names profiles that are not there.
    public func write(to url: URL) throws {
        var file = self
        let calls = CallProfiles.take(from: &file)
        if !calls.entries.isEmpty {
            try Self.writeAtomically(try calls.compressed(), to: CallProfiles.url(beside: url))
        }
        try Self.writeAtomically(try JSONOutput.encode(file), to: url)
    }

    /// Writes `data` to a temporary file beside `url`, then renames it into place.
    public static func writeAtomically(_ data: Data, to url: URL) throws {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        do {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: temporary)
        } catch {
            throw ResultsError(.unwritable, "cannot write \(url.path): \(error.localizedDescription)")
        }
        if rename(temporary.path, url.path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw ResultsError(.unwritable, "cannot write \(url.path): \(reason)")
        }
    }

    /// Makes the folder `url` (and its parents) unless it is there; one that cannot be made is
    /// an `unwritable` failure naming it.
    public static func makeFolder(_ url: URL) throws {
        do { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) } catch {
            throw ResultsError(.unwritable, "cannot make the folder \(url.path): \(error.localizedDescription)")
        }
    }

    /// A file's `createdAt` as stepbench writes it (whole seconds), or with fractional seconds.
    static func date(createdAt text: String) -> Date? {
        if let date = ISO8601DateFormatter().date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }

    /// Reads a results file, checking its schema.
    public static func read(_ url: URL) throws -> ResultsFile {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ResultsError(.unreadable, "\(url.relativePath): cannot read (\(error.localizedDescription))")
        }
        var file = try decode(data, from: url)
        let calls = CallProfiles.url(beside: url)
        if !(file.profiles ?? []).isEmpty || !(file.paths ?? []).isEmpty,
            FileManager.default.fileExists(atPath: calls.path)
        {
            try CallProfiles.read(calls).attach(to: &file)
        }
        return file
    }

    /// The results file `data` holds (read from `url`, which errors name), checking its schema.
    static func decode(_ data: Data, from url: URL) throws -> ResultsFile {
        struct Header: Decodable { var schema: String? }
        let name = url.relativePath  // as it was given
        guard let top = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) else {
            throw ResultsError(.wrongKind, "\(name): not a JSON results file")
        }
        guard top is [String: Any] else {
            throw ResultsError(.wrongKind, "\(name): not a results file (the top level is not an object)")
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: data), let schema = header.schema,
            readableSchemas.contains(schema)
        else {
            let found = (top as? [String: Any])?["schema"].map { "'\($0)'" } ?? "missing"
            throw ResultsError(
                .wrongKind,
                "\(name): schema is \(found), expected \(readableSchemas.map { "'\($0)'" }.joined(separator: " or ")); re-run `stepbench run` or use a matching stepbench version"
            )
        }
        let file: ResultsFile
        do { file = try JSONDecoder().decode(ResultsFile.self, from: data) } catch {
            let what = (error as? DecodingError).map(Self.describe) ?? "\(error)"
            var failure = ResultsError(.malformed, "\(name): malformed \(schema) file: \(what)")
            failure.underlying = error
            throw failure
        }
        if let i = file.rows.firstIndex(where: { $0.status == .ok && $0.summary == nil }) {
            throw ResultsError(.malformed, "\(name): malformed \(schema) file: rows[\(i)] is ok but has no summary")
        }
        return file
    }
}

extension ResultsFile {
    /// What is wrong where, in the file's own terms: "rows[0] has no 'design'".
    static func describe(_ error: DecodingError) -> String {
        func kind(_ type: Any.Type) -> String {  // in JSON's terms
            let name = String(describing: type)
            if name.hasPrefix("Array") { return "a list" }
            if name.hasPrefix("Dictionary") { return "an object" }
            if name == "String" { return "a string" }
            if name == "Bool" { return "true or false" }
            if ["Int", "Int64", "UInt64", "Double", "Float"].contains(name) { return "a number" }
            return "a \(name)"
        }
        func place(_ path: [any CodingKey]) -> String {
            guard !path.isEmpty else { return "the top level" }
            return path.reduce("") { text, key in
                key.intValue.map { "\(text)[\($0)]" } ?? (text.isEmpty ? key.stringValue : "\(text).\(key.stringValue)")
            }
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(place(context.codingPath)) has no '\(key.stringValue)'"
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return "\(place(context.codingPath)) is not \(kind(type))"
        case .dataCorrupted(let context):
            return "\(place(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

/// A failure of the tool's inputs, outputs or helpers: a ``Kind`` from which a caller (or a test)
/// tells what went wrong, and a message that names the file or the name and what to do.
public struct ResultsError: Error, CustomStringConvertible {
    /// What went wrong, one kind per failure; the message says where and what to do.
    public enum Kind: String, CaseIterable, Sendable {
        /// A file or folder that is not there or cannot be read.
        case unreadable
        /// A file that is not the document asked for: not JSON, another schema or another kind
        /// of document (a merged file where runs are needed, a folder where a file is).
        case wrongKind
        /// A document of the right schema whose content is wrong (a missing field, a bad value).
        case malformed
        /// Inputs that cannot go together: other machine kinds, builds, toolchains or
        /// configurations, a measurement given twice.
        case incompatible
        /// Too few inputs, or one that lacks what is needed (a row, a count, a run).
        case missingInput
        /// A name (a design, a benchmark) that the catalog does not hold.
        case unknownName
        /// An output that cannot be written.
        case unwritable
        /// A tool or child process that could not start, failed, or answered with nonsense.
        case toolFailed
        /// A scenario that failed its own verification (exit 3, as `run`).
        case verificationFailed
    }

    public var kind: Kind
    public var description: String
    /// The error that made the file unusable, when there was one (a decoding error).
    public var underlying: (any Error)? = nil

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    /// The kind of `error` when it is a ``ResultsError`` (a message wrapped in context keeps its
    /// kind), else `otherwise`.
    public static func kind(of error: any Error, otherwise: Kind) -> Kind {
        (error as? ResultsError)?.kind ?? otherwise
    }
}
