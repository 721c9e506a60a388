/// Why the window could not open or draw; one line each.
public enum WindowError: Error, CustomStringConvertible, Sendable {
    /// SDL could not start its video subsystem or open the window.
    case sdl(String)
    /// The renderer (OpenGL or SDL_Renderer) could not start.
    case renderer(String)
    /// No font for text was found or it did not load.
    case font(String)

    public var description: String {
        switch self {
        case .sdl(let message): "SDL: \(message)"
        case .renderer(let message): "renderer: \(message)"
        case .font(let message): "font: \(message)"
        }
    }
}
