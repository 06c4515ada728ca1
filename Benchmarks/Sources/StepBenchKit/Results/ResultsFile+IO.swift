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
            throw ResultsError("\(url.relativePath): cannot read (\(error.localizedDescription))")
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
            throw ResultsError("\(name): not a JSON results file")
        }
        guard top is [String: Any] else {
            throw ResultsError("\(name): not a results file (the top level is not an object)")
        }
        guard let header = try? JSONDecoder().decode(Header.self, from: data), let schema = header.schema,
            readableSchemas.contains(schema)
        else {
            let found = (top as? [String: Any])?["schema"].map { "'\($0)'" } ?? "missing"
            throw ResultsError(
                "\(name): schema is \(found), expected \(readableSchemas.map { "'\($0)'" }.joined(separator: " or ")); re-run `stepbench run` or use a matching stepbench version"
            )
        }
        let file: ResultsFile
        do { file = try JSONDecoder().decode(ResultsFile.self, from: data) } catch {
            let what = (error as? DecodingError).map(Self.describe) ?? "\(error)"
            var failure = ResultsError("\(name): malformed \(schema) file: \(what)")
            failure.underlying = error
            throw failure
        }
        if let i = file.rows.firstIndex(where: { $0.status == .ok && $0.summary == nil }) {
            throw ResultsError("\(name): malformed \(schema) file: rows[\(i)] is ok but has no summary")
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

/// A results file problem: names the file and what to do.
public struct ResultsError: Error, CustomStringConvertible {
    public var description: String
    /// The error that made the file unusable, when there was one (a decoding error).
    public var underlying: (any Error)? = nil
    public init(_ description: String) { self.description = description }
}
