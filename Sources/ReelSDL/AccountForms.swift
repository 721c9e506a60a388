import Foundation
import ReelAccountClient

/// A set of one-line text fields with a focus, SDL-style input (committed text, the IME's
/// uncommitted composition, backspace) and a length limit per field. No SDL in here.
public struct TextFields: Sendable, Hashable {
    public struct Field: Sendable, Hashable {
        public var label: String
        public var placeholder: String
        public var text: String = ""
        /// Drawn as dots unless shown (passwords).
        public var isSecure: Bool
        public var maxLength: Int

        public init(label: String, placeholder: String = "", isSecure: Bool = false, maxLength: Int = 256) {
            self.label = label
            self.placeholder = placeholder
            self.isSecure = isSecure
            self.maxLength = maxLength
        }
    }

    public private(set) var fields: [Field]
    public private(set) var focus: Int = 0
    /// The IME's uncommitted text in the focused field.
    public private(set) var composition = ""

    public init(_ fields: [Field]) {
        self.fields = fields
    }

    public subscript(_ index: Int) -> String {
        get { fields[index].text }
        set { fields[index].text = String(newValue.prefix(fields[index].maxLength)) }
    }

    /// Committed text (SDL_TEXTINPUT): appended to the focused field; ends a composition.
    /// Control characters (a pasted newline, tab) are dropped.
    public mutating func insert(_ text: String) {
        composition = ""
        guard fields.indices.contains(focus) else { return }
        let clean = text.filter { !$0.isNewline && !($0.unicodeScalars.first.map { $0.value < 0x20 || $0.value == 0x7f } ?? false) }
        let room = fields[focus].maxLength - fields[focus].text.count
        guard room > 0 else { return }
        fields[focus].text += clean.prefix(room)
    }

    /// The IME's composition (SDL_TEXTEDITING): shown after the text, not yet part of it.
    public mutating func compose(_ text: String) { composition = text }

    public mutating func backspace() {
        guard composition.isEmpty, fields.indices.contains(focus), !fields[focus].text.isEmpty else { return }
        fields[focus].text.removeLast()
    }

    public mutating func focus(_ index: Int) {
        guard fields.indices.contains(index) else { return }
        focus = index
        composition = ""
    }

    /// Tab: the next field (wrapping); shift-tab the previous.
    public mutating func focusNext(backwards: Bool = false) {
        guard !fields.isEmpty else { return }
        focus((focus + (backwards ? fields.count - 1 : 1)) % fields.count)
    }

    /// What field `index` shows: its text (dots when secure and hidden), then the composition when focused.
    public func display(_ index: Int, revealSecure: Bool = false) -> String {
        let field = fields[index]
        let text = field.isSecure && !revealSecure ? String(repeating: "•", count: field.text.count) : field.text
        return index == focus ? text + composition : text
    }
}

/// Sign-in and sign-up: the fields, inline validation by the server's own rules
/// (``AccountRules``), the password hidden with a show toggle, a submission that cannot
/// start twice while one is in flight, and the server's refusal shown inline.
public struct AccountForm: Sendable, Hashable {
    public enum Field: Int, Sendable, Hashable {
        case name, email, password
    }

    /// What to send.
    public enum Submission: Sendable, Hashable {
        case signIn(name: String, password: String)
        case signUp(name: String, email: String, password: String)
    }

    public private(set) var mode: AuthPage
    public private(set) var inputs: TextFields
    public private(set) var showsPassword = false
    /// A request is in flight: the button is disabled and submitting again does nothing.
    public private(set) var isSubmitting = false
    /// The server's answer to the last attempt (wrong password, name taken, …).
    public private(set) var serverError: String?
    /// Fields whose errors are shown: left once, or all after a submit was tried.
    private var touched: Set<Field> = []

    public init(mode: AuthPage) {
        self.mode = mode
        inputs = TextFields([])
        layoutFields(keeping: [:])
    }

    /// The fields the form shows, in order.
    public var fields: [Field] { mode == .signIn ? [.name, .password] : [.name, .email, .password] }
    public var focusedField: Field { fields[min(inputs.focus, fields.count - 1)] }

    public func text(_ field: Field) -> String {
        fields.firstIndex(of: field).map { inputs[$0] } ?? ""
    }

    /// Switches between sign-in and sign-up, keeping what was typed.
    public mutating func setMode(_ mode: AuthPage) {
        guard mode != self.mode, !isSubmitting else { return }
        var kept: [Field: String] = [:]
        for (i, field) in fields.enumerated() { kept[field] = inputs[i] }
        self.mode = mode
        layoutFields(keeping: kept)
        serverError = nil
        touched = []
    }

    private mutating func layoutFields(keeping kept: [Field: String]) {
        inputs = TextFields(fields.map { field in
            switch field {
            case .name: TextFields.Field(label: mode == .signIn ? "用户名或邮箱 Name or e-mail" : "用户名 Name",
                                         placeholder: mode == .signIn ? "ada 或 ada@example.org" : "3–32 letters, digits, _ . -",
                                         maxLength: mode == .signIn ? 254 : 32)
            case .email: TextFields.Field(label: "邮箱 E-mail", placeholder: "ada@example.org", maxLength: 254)
            case .password: TextFields.Field(label: "密码 Password", placeholder: "at least \(AccountRules.minimumPasswordLength) characters",
                                             isSecure: true, maxLength: 256)
            }
        })
        for (i, field) in fields.enumerated() { inputs[i] = kept[field] ?? "" }
    }

    // MARK: Input

    public mutating func insert(_ text: String) {
        guard !isSubmitting else { return }
        inputs.insert(text)
    }
    public mutating func compose(_ text: String) {
        guard !isSubmitting else { return }
        inputs.compose(text)
    }
    public mutating func backspace() {
        guard !isSubmitting else { return }
        inputs.backspace()
    }
    public mutating func focus(_ field: Field) {
        if focusedField != field { touched.insert(focusedField) }
        if let i = fields.firstIndex(of: field) { inputs.focus(i) }
    }
    public mutating func focusNext(backwards: Bool = false) {
        touched.insert(focusedField)
        inputs.focusNext(backwards: backwards)
    }
    public mutating func toggleShowsPassword() { showsPassword.toggle() }

    // MARK: Validation

    /// Why `field`'s text would be refused (nil: it is fine), by the server's rules.
    public func problem(_ field: Field) -> String? {
        let value = text(field)
        switch field {
        case .name:
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { return mode == .signIn ? "请输入用户名或邮箱 Enter your name or e-mail" : "请输入用户名 Enter a name" }
            if mode == .signUp, !AccountRules.validName(trimmed) {
                return "3–32 个字母、数字、_ . - Name: 3–32 letters, digits, _ . -"
            }
        case .email:
            let trimmed = value.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { return "请输入邮箱 Enter an e-mail address" }
            if !AccountRules.validEmail(trimmed) { return "邮箱格式不对 Not an e-mail address" }
        case .password:
            if value.isEmpty { return "请输入密码 Enter the password" }
            if value.count < AccountRules.minimumPasswordLength {
                return "密码至少 \(AccountRules.minimumPasswordLength) 位 At least \(AccountRules.minimumPasswordLength) characters"
            }
            if value.utf8.count > AccountRules.maximumPasswordBytes { return "密码太长 Too long" }
        }
        return nil
    }

    /// The error shown under `field` now: only once the user has left it or tried to submit.
    public func shownProblem(_ field: Field) -> String? {
        touched.contains(field) ? problem(field) : nil
    }

    public var isValid: Bool { fields.allSatisfy { problem($0) == nil } }
    /// Whether the submit button is enabled.
    public var canSubmit: Bool { isValid && !isSubmitting }

    // MARK: Submitting

    /// Enter or the button: the request to send, or nil (invalid — the errors show — or one
    /// is already in flight).
    public mutating func submit() -> Submission? {
        touched.formUnion(fields)
        guard !isSubmitting, isValid else { return nil }
        isSubmitting = true
        serverError = nil
        inputs.compose("")
        let name = text(.name).trimmingCharacters(in: .whitespaces)
        switch mode {
        case .signIn: return .signIn(name: name, password: text(.password))
        case .signUp: return .signUp(name: name, email: text(.email).trimmingCharacters(in: .whitespaces), password: text(.password))
        }
    }

    /// The request ended: `error` is the server's line (nil: it succeeded, and the password is cleared).
    public mutating func finish(error: String?) {
        isSubmitting = false
        serverError = error
        if error == nil, let i = fields.firstIndex(of: .password) { inputs[i] = "" }
    }

    /// The password field's text as drawn: dots unless shown.
    public func display(_ field: Field) -> String {
        guard let i = fields.firstIndex(of: field) else { return "" }
        return inputs.display(i, revealSecure: showsPassword)
    }
}

/// The upload form: a file (dropped on the window or typed as a path), a title and a
/// category; progress while it streams; the result or the server's refusal.
public struct UploadForm: Sendable, Hashable {
    public enum Field: Int, Sendable, Hashable, CaseIterable {
        case path, title, category
    }

    public enum Status: Sendable, Hashable {
        case editing
        case uploading(sent: Int64, total: Int64)
        case done(title: String, category: String)
        case failed(String)
    }

    public private(set) var inputs = TextFields([
        .init(label: "文件 File", placeholder: "拖放视频到窗口，或输入路径 Drop a video or type its path", maxLength: 4096),
        .init(label: "标题 Title", placeholder: "给视频起个标题 A title", maxLength: 200),
        .init(label: "分类 Category", placeholder: "uploads", maxLength: 40),
    ])
    public private(set) var status: Status = .editing
    private var attempted = false

    public init() {}

    public var focusedField: Field { Field(rawValue: inputs.focus) ?? .path }
    public func text(_ field: Field) -> String { inputs[field.rawValue] }
    public func display(_ field: Field) -> String { inputs.display(field.rawValue) }
    public var isUploading: Bool { if case .uploading = status { true } else { false } }

    public mutating func insert(_ text: String) { if !isUploading { inputs.insert(text) } }
    public mutating func compose(_ text: String) { if !isUploading { inputs.compose(text) } }
    public mutating func backspace() { if !isUploading { inputs.backspace() } }
    public mutating func focus(_ field: Field) { inputs.focus(field.rawValue) }
    public mutating func focusNext(backwards: Bool = false) { inputs.focusNext(backwards: backwards) }

    /// A file dropped on the window: its path, and its name as the title when none was typed.
    public mutating func drop(path: String) {
        guard !isUploading else { return }
        inputs[Field.path.rawValue] = path
        if text(.title).trimmingCharacters(in: .whitespaces).isEmpty {
            let name = path.split(separator: "/").last.map(String.init) ?? path
            let stem = name.split(separator: ".", omittingEmptySubsequences: false).dropLast().joined(separator: ".")
            inputs[Field.title.rawValue] = stem.isEmpty ? name : stem
        }
        inputs.focus(Field.title.rawValue)
        if case .editing = status {} else { status = .editing }
    }

    public func problem(_ field: Field) -> String? {
        let value = text(field).trimmingCharacters(in: .whitespaces)
        switch field {
        case .path: return value.isEmpty ? "选择一个视频文件 Choose a video file" : nil
        case .title: return value.isEmpty ? "请输入标题 Enter a title" : nil
        case .category: return value.isEmpty || AccountRules.validCategory(value) ? nil : "分类: 1–40 letters, digits, _ -"
        }
    }

    public func shownProblem(_ field: Field) -> String? { attempted ? problem(field) : nil }
    public var canSubmit: Bool { !isUploading && Field.allCases.allSatisfy { problem($0) == nil } }

    /// The upload to start, or nil (a field is wrong, or one is already streaming).
    public mutating func submit() -> (path: String, title: String, category: String?)? {
        attempted = true
        guard canSubmit else { return nil }
        status = .uploading(sent: 0, total: 0)
        let category = text(.category).trimmingCharacters(in: .whitespaces)
        return (text(.path).trimmingCharacters(in: .whitespaces), text(.title).trimmingCharacters(in: .whitespaces),
                category.isEmpty ? nil : category)
    }

    public mutating func progress(sent: Int64, total: Int64) {
        guard isUploading else { return }
        status = .uploading(sent: sent, total: total)
    }

    /// The upload ended: the item, or the server's (or the file's) refusal.
    public mutating func finish(_ result: Result<UploadedItem, UploadRefusal>) {
        switch result {
        case .success(let item):
            status = .done(title: item.title, category: item.category)
            inputs = UploadForm().inputs
            attempted = false
        case .failure(let refusal):
            status = .failed(refusal.message)
        }
    }

    /// How far the bar is filled, 0…1.
    public var fraction: Double {
        if case .uploading(let sent, let total) = status, total > 0 { return min(1, Double(sent) / Double(total)) }
        if case .done = status { return 1 }
        return 0
    }
}

/// Why an upload was refused, as one line for the upload page.
public struct UploadRefusal: Error, Sendable, Hashable {
    public var message: String
    public init(_ message: String) { self.message = message }
}

/// The profile editor: nickname and bio.
public struct ProfileForm: Sendable, Hashable {
    public private(set) var inputs = TextFields([
        .init(label: "昵称 Nickname", maxLength: 40),
        .init(label: "简介 Bio", maxLength: 280),
    ])
    public private(set) var isSaving = false
    public private(set) var error: String?

    public init(nickname: String = "", bio: String = "") {
        inputs[0] = nickname
        inputs[1] = bio
    }

    public var nickname: String { inputs[0] }
    public var bio: String { inputs[1] }
    public mutating func insert(_ text: String) { if !isSaving { inputs.insert(text) } }
    public mutating func compose(_ text: String) { if !isSaving { inputs.compose(text) } }
    public mutating func backspace() { if !isSaving { inputs.backspace() } }
    public mutating func focus(_ index: Int) { inputs.focus(index) }
    public mutating func focusNext() { inputs.focusNext() }

    public var problem: String? {
        nickname.trimmingCharacters(in: .whitespaces).isEmpty ? "昵称不能为空 The nickname must not be empty" : nil
    }

    public mutating func submit() -> ProfileUpdate? {
        guard !isSaving else { return nil }
        if let problem { error = problem; return nil }
        isSaving = true
        error = nil
        return ProfileUpdate(nickname: nickname.trimmingCharacters(in: .whitespaces), bio: bio)
    }

    public mutating func finish(error: String?) {
        isSaving = false
        self.error = error
    }
}

/// Changing the avatar: a picture's path (dropped on the window or typed), one request at a
/// time, and the server's refusal kept beside the path so nothing typed is lost.
public struct AvatarForm: Sendable, Hashable {
    public private(set) var inputs = TextFields([
        .init(label: "图片文件 Picture file", placeholder: "拖放图片到窗口，或输入路径 Drop a picture or type its path", maxLength: 4096),
    ])
    /// The picture is being sent: the button is disabled and submitting again does nothing.
    public private(set) var isSending = false
    /// Why the last picture was refused (the server's line, or the file's), else nil.
    public private(set) var error: String?

    public init(path: String = "") {
        inputs[0] = path
    }

    public var path: String { inputs[0] }
    public func display() -> String { inputs.display(0) }

    public mutating func insert(_ text: String) { if !isSending { inputs.insert(text) } }
    public mutating func compose(_ text: String) { if !isSending { inputs.compose(text) } }
    public mutating func backspace() { if !isSending { inputs.backspace() } }

    /// A picture dropped on the window replaces the path (not while one is being sent).
    public mutating func drop(path: String) {
        guard !isSending else { return }
        inputs[0] = path
        inputs.compose("")
    }

    public var problem: String? {
        path.trimmingCharacters(in: .whitespaces).isEmpty ? "选择一张图片 Choose a picture" : nil
    }

    /// The path to send, or nil (empty — the problem shows — or a picture is already on its way).
    public mutating func submit() -> String? {
        guard !isSending else { return nil }
        if let problem { error = problem; return nil }
        isSending = true
        error = nil
        inputs.compose("")
        return path.trimmingCharacters(in: .whitespaces)
    }

    /// The request ended: `error` is why the picture was refused (nil: the avatar changed).
    public mutating func finish(error: String?) {
        isSending = false
        self.error = error
    }
}
