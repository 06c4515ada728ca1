import Foundation
import StepBenchScenarios

extension ResultsFile {
    /// Writes atomically: a temporary file beside `url`, then rename, so a reader never sees
    /// half a file and an interrupted run never destroys the previous one.
    public func write(to url: URL) throws {
        try Self.writeAtomically(try JSONOutput.encode(self), to: url)
    }

    /// Writes `data` to a temporary file beside `url`, then renames it into place.
    public static func writeAtomically(_ data: Data, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
        try data.write(to: temporary)
        if rename(temporary.path, url.path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw ResultsError("cannot write \(url.path): \(reason)")
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
            throw ResultsError("\(url.path): cannot read (\(error.localizedDescription))")
        }
        return try decode(data, from: url)
    }

    /// The results file `data` holds (read from `url`, which errors name), checking its schema.
    static func decode(_ data: Data, from url: URL) throws -> ResultsFile {
        struct Header: Decodable { var schema: String? }
        guard let header = try? JSONDecoder().decode(Header.self, from: data) else {
            let json = (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil
            throw ResultsError(
                "\(url.path): "
                    + (json ? "not a results file (the top level is not an object)" : "not a JSON results file"))
        }
        guard let schema = header.schema, readableSchemas.contains(schema) else {
            throw ResultsError(
                "\(url.path): schema is \(header.schema.map { "'\($0)'" } ?? "missing"), expected \(readableSchemas.map { "'\($0)'" }.joined(separator: " or ")); re-run `stepbench run` or use a matching stepbench version"
            )
        }
        do { return try JSONDecoder().decode(ResultsFile.self, from: data) } catch {
            let what = (error as? DecodingError).map(Self.describe) ?? "\(error)"
            var failure = ResultsError("\(url.path): malformed \(schema) file: \(what)")
            failure.underlying = error
            throw failure
        }
    }
}

extension ResultsFile {
    /// What is wrong where, in the file's own terms: "rows[0] has no 'design'".
    static func describe(_ error: DecodingError) -> String {
        func place(_ path: [any CodingKey]) -> String {
            guard !path.isEmpty else { return "the top level" }
            return path.reduce("") { text, key in
                key.intValue.map { "\(text)[\($0)]" } ?? (text.isEmpty ? key.stringValue : "\(text).\(key.stringValue)")
            }
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(place(context.codingPath)) has no '\(key.stringValue)'"
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let name = String(describing: type)
            return "\(place(context.codingPath)) is not \(name.hasPrefix("Array") ? "a list" : "a \(name)")"
        case .dataCorrupted(let context):
            return "\(place(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }
}

/// A results file problem: names the file and what to do.
public struct ResultsError: Error, CustomStringConvertible {
    public var description: String
    /// The error that made the file unusable, when there was one (a decoding error).
    public var underlying: (any Error)? = nil
    public init(_ description: String) { self.description = description }
}
