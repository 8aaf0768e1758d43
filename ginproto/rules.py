"""The rules in force for a match: the variant and every option of RULES.md, as one frozen value."""

from __future__ import annotations

import dataclasses
import difflib
import enum
from collections.abc import Mapping
from dataclasses import dataclass

from ginproto.cards import Card


class RulesError(ValueError):
    """A rule parameter is unknown or has a bad value."""


class Variant(enum.Enum):
    """The four games the referee knows."""

    STANDARD = "standard"
    OKLAHOMA = "oklahoma"
    HOLLYWOOD = "hollywood"
    THREEHANDED = "threehanded"

    def __str__(self) -> str:
        return self.value


SPADE_DOUBLE = 2
"""The multiplier of a hand whose first upcard is a spade, under ``spade_double``."""
SHUTOUT_DOUBLE = 2
"""The multiplier of a game won by a shutout, under ``shutout_double``."""


@dataclass(frozen=True, slots=True)
class Rules:
    """The variant and every rule option. The defaults are the seeds' reading (RULES.md).

    ``turn_cap`` bounds the length of a hand: when a player discards and this many turns have
    been taken in the hand (a turn is one draw, or taking the first upcard), the hand is drawn.
    ``hand_cap`` bounds the length of a game: after this many hands (drawn ones included) the
    game ends, won by the player ahead (see ``Game``), so that two players who never knock
    cannot make a game last forever.
    """

    variant: Variant = Variant.STANDARD
    target: int = 100
    gin_bonus: int = 25
    undercut_bonus: int = 10
    knock_limit: int = 10
    oklahoma_ace_limit: int = 1
    spade_double: bool = False
    big_gin: bool = False
    big_gin_bonus: int = 31
    discard_taken: bool = False
    turn_cap: int = 100
    hand_cap: int = 500
    game_bonus: int = 0
    box_bonus: int = 0
    shutout_double: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.variant, Variant):
            raise RulesError(f"variant must be a Variant, not {self.variant!r}")
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.type == "int" and (not isinstance(value, int) or isinstance(value, bool)):
                raise RulesError(f"{f.name} must be a whole number, not {value!r}")
            if f.type == "bool" and not isinstance(value, bool):
                raise RulesError(f"{f.name} must be true or false, not {value!r}")
        if self.target < 1:
            raise RulesError("target must be at least 1")
        if not 0 <= self.knock_limit <= 100 or not 0 <= self.oklahoma_ace_limit <= 100:
            raise RulesError("knock limits must be between 0 and 100")
        if self.turn_cap < 2 or self.hand_cap < 1:
            raise RulesError("turn_cap must be at least 2 and hand_cap at least 1")
        for name in ("gin_bonus", "undercut_bonus", "big_gin_bonus", "game_bonus", "box_bonus"):
            if getattr(self, name) < 0:
                raise RulesError(f"{name} must not be negative")

    @property
    def players(self) -> int:
        """How many players take part: 3 in the three-handed game, else 2."""
        return 3 if self.variant is Variant.THREEHANDED else 2

    @property
    def games(self) -> int:
        """How many games are scored at once: 3 in Hollywood, else 1."""
        return 3 if self.variant is Variant.HOLLYWOOD else 1

    def knock_limit_for(self, upcard: Card) -> int:
        """The knock limit of a hand whose first upcard is ``upcard``."""
        if self.variant is Variant.OKLAHOMA:
            return self.oklahoma_ace_limit if upcard.rank == 0 else upcard.value
        return self.knock_limit

    def multiplier_for(self, upcard: Card) -> int:
        """2 when the spade-doubling option is on and the first upcard is a spade, else 1."""
        return SPADE_DOUBLE if self.spade_double and upcard.suit == 3 else 1

    @property
    def max_hand_points(self) -> int:
        """A bound on one hand's points under these rules: 100 deadwood (more than ten or
        eleven cards hold) with the largest bonus, times the spade double."""
        bonus = max(self.gin_bonus, self.big_gin_bonus, self.undercut_bonus + 100)
        return SPADE_DOUBLE * (100 + bonus)

    @property
    def max_score(self) -> int:
        """A bound on a player's final score in one game: a column ends below ``target``
        plus one hand, then the box and game bonuses and the shutout double come on top."""
        column = self.target - 1 + self.max_hand_points
        return SHUTOUT_DOUBLE * (column + self.box_bonus * self.hand_cap + self.game_bonus)

    def to_params(self) -> dict[str, str]:
        """Every parameter as text, in a fixed order (records and the protocol carry these)."""
        out: dict[str, str] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool):
                out[f.name] = "true" if value else "false"
            else:
                out[f.name] = str(value)
        return out

    @classmethod
    def from_params(cls, params: Mapping[str, str], base: Rules | None = None) -> Rules:
        """Build rules from text parameters (``to_params``'s form), over ``base`` or the defaults.

        Raises ``RulesError`` naming the parameter on an unknown name or a bad value.
        """
        kwargs: dict[str, object] = {}
        types = {f.name: f.type for f in dataclasses.fields(cls)}
        for name, text in params.items():
            if name not in types:
                close = difflib.get_close_matches(name, list(types), n=1)
                if close:
                    raise RulesError(f"unknown rule {name!r}; did you mean {close[0]!r}?")
                known = ", ".join(types)
                raise RulesError(f"unknown rule {name!r} (known rules: {known})")
            kwargs[name] = _parse_value(name, types[name], text)
        try:
            return dataclasses.replace(base or cls(), **kwargs)  # type: ignore[arg-type]
        except TypeError as exc:  # pragma: no cover - names are checked above
            raise RulesError(str(exc)) from exc

    def changes(self) -> dict[str, str]:
        """The parameters that differ from the defaults of this rules' variant."""
        default = Rules(variant=self.variant).to_params()
        return {k: v for k, v in self.to_params().items() if default[k] != v}


def _parse_value(name: str, kind: object, text: str) -> object:
    text = text.strip()
    if kind == "Variant":
        try:
            return Variant(text.lower())
        except ValueError:
            choices = "|".join(v.value for v in Variant)
            raise RulesError(f"{name} must be one of {choices}, not {text!r}") from None
    if kind == "bool":
        low = text.lower()
        if low in ("true", "yes", "on", "1"):
            return True
        if low in ("false", "no", "off", "0"):
            return False
        raise RulesError(f"{name} must be true or false, not {text!r}")
    try:
        return int(text)
    except ValueError:
        raise RulesError(f"{name} must be a whole number, not {text!r}") from None
