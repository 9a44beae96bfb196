"""A GTP v2 Go engine: `python -m azjax.engines.gtp --checkpoint PATH [--simulations N]`.

Commands: protocol_version, name, version, known_command, list_commands,
boardsize, clear_board, komi, play, genmove, undo, showboard, final_score,
quit. Answers are `=[id] result` or `?[id] message`, each ended by an empty
line. The board size is the checkpoint's (9 or 19); `play` of a colour that is
not to move inserts a pass for the other colour, as GTP allows. Moves that
pgx's rules reject (occupied, suicide, ko, superko) are `? illegal move` and
change nothing. A game goes on past pgx's length cap of 2 x points plies,
which training keeps, to 8 x points (pgx_private.engine_env). `final_score`
counts area (Tromp-Taylor: stones and the empty regions that touch one colour)
minus the komi set by `komi`; the network and its search know only training's
komi, pgx's 7.5, whatever `komi` says (GTP asks an engine to accept any komi).
`genmove` resigns only when --resign V is set and the search's value falls
below -V. Everything `genmove` runs compiles before the first answer.
"""

from __future__ import annotations

import math
import re
import sys

from azjax.engines.base import Engine, ProtocolError, Thinker, rehearse, serve, thinker_for
from azjax.engines.launch import engine_parser
from azjax.engines.pgx_private import engine_env
from azjax.engines.positions import GoPosition, IllegalMove

COLOURS = {"b": 0, "black": 0, "w": 1, "white": 1}


class GtpEngine(Engine):
  version_text = "0.1.0"
  unknown_text = "unknown command"

  def __init__(self, thinker: Thinker, out=sys.stdout, resign: float | None = None):
    super().__init__(out)
    self.thinker = thinker
    self.game = thinker.agent.config.game
    self.resign = resign
    self.komi = 7.5
    self.position = self.new_position()
    self.inserted: list[bool] = []  # per move: was it a pass we inserted to let a colour play out of turn
    self.ident = ""
    self.warm = False
    self.commands.update(
        protocol_version=lambda a: "2", name=lambda a: "azjax", version=lambda a: self.version_text,
        known_command=self.known_command, list_commands=lambda a: "\n".join(self.commands),
        boardsize=self.boardsize, clear_board=self.clear_board, komi=self.set_komi, play=self.play,
        genmove=self.genmove, undo=self.undo, showboard=lambda a: "\n" + self.position.showboard(),
        final_score=self.final_score, quit=self.quit)

  def new_position(self) -> GoPosition:
    """A Go game that outlasts pgx's length cap (pgx_private.engine_env)."""
    return GoPosition(self.game, engine_env(self.game))

  def warm_up(self) -> None:
    """Compiles a move and the search before the first answer, so no `genmove` pays for compilation."""
    scratch = self.new_position()
    rehearse(scratch)
    self.thinker.warm_up(scratch.state, scratch.env, [self.thinker.simulations])
    self.warm = True

  # GTP lines may carry an id and comments; every answer is framed `=id ...` or `?id ...` and a blank line.
  def handle(self, line: str) -> bool:
    if not self.warm:
      try:
        self.warm_up()
      except Exception:  # noqa: BLE001  (then the first genmove compiles; the engine still answers)
        self.warm = True
    line = re.sub(r"[\x00-\x08\x0b-\x1f\x7f]", "", line.split("#", 1)[0]).replace("\t", " ")
    words = line.split()
    self.ident = words.pop(0) if words and words[0].isascii() and words[0].isdigit() else ""
    if self.ident and not words:
      self.error("missing command")
      return self.running
    return self.run(words)

  def answer(self, result: str | None) -> None:
    self.send(f"={self.ident} {result}".rstrip() + "\n" if result else f"={self.ident}\n")

  def error(self, message: str) -> None:
    self.send(f"?{self.ident} {message}\n")

  def known_command(self, args) -> str:
    if len(args) != 1:
      raise ProtocolError("syntax error")
    return "true" if args[0] in self.commands else "false"

  def boardsize(self, args) -> str:
    if len(args) != 1 or not (args[0].isascii() and args[0].isdigit()):
      raise ProtocolError("syntax error")
    if len(args[0]) > 4 or int(args[0]) != self.position.size:
      raise ProtocolError("unacceptable size")
    return self.clear_board([])

  def clear_board(self, _args) -> str:
    self.position = self.new_position()
    self.inserted = []
    return ""

  def set_komi(self, args) -> str:
    try:
      (komi,) = args
      komi = float(komi)
    except ValueError:
      raise ProtocolError("syntax error") from None
    if not math.isfinite(komi):
      raise ProtocolError("syntax error")
    self.komi = komi
    return ""

  def _colour(self, word: str) -> int:
    if word.lower() not in COLOURS:
      raise ProtocolError("syntax error")
    return COLOURS[word.lower()]

  def _turn(self, colour: int) -> None:
    """Lets `colour` move: a pass by the other colour if it is not its turn."""
    if self.position.over:
      raise ProtocolError("illegal move")
    if self.position.color != colour:
      if self.position.moves and self.position.moves[-1] == "pass":
        raise ProtocolError("illegal move")  # a second pass in a row would end the game under pgx's rules
      self.position.play("pass")
      self.inserted.append(True)

  def play(self, args) -> str:
    if len(args) != 2:
      raise ProtocolError("syntax error")
    colour = self._colour(args[0])
    if args[1].lower() == "resign":
      return ""
    if not re.match(r"^(pass|[a-hj-t]\d{1,2})$", args[1], re.IGNORECASE):  # GNU Go sends PASS
      raise ProtocolError("syntax error")
    before = len(self.position.moves)
    self._turn(colour)
    try:
      self.position.play(args[1])
      self.inserted.append(False)
    except IllegalMove:
      while len(self.position.moves) > before:  # take back an inserted pass
        self.position.undo()
        self.inserted.pop()
      raise ProtocolError("illegal move") from None
    return ""

  def genmove(self, args) -> str:
    if len(args) != 1:
      raise ProtocolError("syntax error")
    colour = self._colour(args[0])
    if self.position.over:
      return "pass"
    self._turn(colour)
    weights, value, _ = self.thinker.think(self.position.state, self.thinker.simulations, self.position.env)
    if self.resign is not None and value < -self.resign:
      return "resign"
    self.position.push_best(weights)
    self.inserted.append(False)
    return self.position.moves[-1]

  def undo(self, _args) -> str:
    if not self.inserted:
      raise ProtocolError("cannot undo")
    self.position.undo()
    self.inserted.pop()
    while self.inserted and self.inserted[-1]:
      self.position.undo()
      self.inserted.pop()
    return ""

  def final_score(self, _args) -> str:
    score = self.position.area_score(self.komi)
    return "0" if score == 0 else (f"B+{score:g}" if score > 0 else f"W+{-score:g}")

  def quit(self, _args) -> str:
    self.running = False
    return ""


def main(argv=None) -> None:
  parser = engine_parser("azjax as a GTP Go engine")
  parser.add_argument("--resign", type=float, default=None, help="resign when the value is below -RESIGN")
  args = parser.parse_args(argv)
  serve(GtpEngine(thinker_for(args, ("go9", "go")), resign=args.resign))


if __name__ == "__main__":
  main()
