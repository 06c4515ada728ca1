import Foundation

/// How StepBench writes JSON, everywhere (results files, noise profiles, comparisons, exports,
/// the catalog): pretty-printed with sorted keys, so that files diff well and one value is
/// always written byte for byte the same.
public enum JSONOutput {
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }

    public static func encode(_ value: some Encodable) throws -> Data { try encoder().encode(value) }

    public static func string(_ value: some Encodable) throws -> String {
        String(decoding: try encode(value), as: UTF8.self)
    }
}
