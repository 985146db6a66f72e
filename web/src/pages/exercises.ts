// The exercises page: write attention's pieces in JavaScript, judged by the wasm core.
import '../styles/main.css';
import '../exercises/exercises.css';
import { mountExercisesPage } from '../exercises/page';

void mountExercisesPage();
