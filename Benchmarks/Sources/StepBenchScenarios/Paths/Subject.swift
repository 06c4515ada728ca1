@_spi(Measurement) import Stepping

/// What a path driver drives: a plain subscriber (the floor: no stepper, no promise), floor-step
/// (the stepping API with no synchronisation, ``FloorStep``), or one of the designs. A design's
/// cost over the floor splits into the API's (floor-step − floor) and its synchronisation's
/// (design − floor-step). Encoded as its ``name``.
public enum Subject: Hashable, Sendable, Codable, CustomStringConvertible {
    case floor
    case floorStep
    case design(SteppingDesign)
    /// A design a results file names that this process has not described (another executable's
    /// outside design): its rows are read, merged, compared and exported by name, never run.
    case foreign(String)

    /// The two references every design is measured against, then every design.
    public static var all: [Subject] { [.floor, .floorStep] + SteppingDesign.described.map(Subject.design) }

    /// The name in results files and tables: `floor`, `floor-step`, or the design's.
    public var name: String {
        switch self {
        case .floor: "floor"
        case .floorStep: "floor-step"
        case .design(let design): design.rawValue
        case .foreign(let name): name
        }
    }

    public var description: String { name }

    public init?(name: String) {
        switch name {
        case "floor": self = .floor
        case "floor-step": self = .floorStep
        default:
            guard let design = SteppingDesign(rawValue: name) else { return nil }
            self = .design(design)
        }
    }

    /// The design's name, for a design this process knows or a foreign one; nil for the floors.
    public var designName: String? {
        switch self {
        case .floor, .floorStep: nil
        case .design(let design): design.name
        case .foreign(let name): name
        }
    }

    /// The design, if this is one this process knows.
    public var design: SteppingDesign? {
        if case .design(let design) = self { design } else { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard !name.isEmpty else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a subject with no name")
        }
        self = Subject(name: name) ?? .foreign(name)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
