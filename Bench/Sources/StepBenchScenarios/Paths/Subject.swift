import Stepping

/// What a path driver drives: a plain subscriber (the floor: no stepper, no promise), floor-step
/// (the stepping API with no synchronisation, ``FloorStep``), or one of the designs. A design's
/// cost over the floor splits into the API's (floor-step − floor) and its synchronisation's
/// (design − floor-step). Encoded as its ``name``.
public enum Subject: Hashable, Sendable, Codable, CustomStringConvertible {
    case floor
    case floorStep
    case design(SteppingDesign)

    /// The two references every design is measured against, then every design.
    public static var all: [Subject] { [.floor, .floorStep] + SteppingDesign.described.map(Subject.design) }

    /// The name in results files and tables: `floor`, `floor-step`, or the design's.
    public var name: String {
        switch self {
        case .floor: "floor"
        case .floorStep: "floor-step"
        case .design(let design): design.rawValue
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

    /// The design, if this is one.
    public var design: SteppingDesign? {
        if case .design(let design) = self { design } else { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let name = try container.decode(String.self)
        guard let subject = Subject(name: name) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription:
                    "unknown subject '\(name)' (floor, floor-step or one of \(SteppingDesign.described.map(\.rawValue)))"
            )
        }
        self = subject
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
